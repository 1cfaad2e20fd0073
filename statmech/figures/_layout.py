"""Layout checks of a finished figure: no text over another text, no label over a curve, nothing
clipped.

:func:`problems` draws the figure (Agg) and compares display-space bounding boxes:

* every pair of *texts* -- titles, suptitle, axis labels, figure texts, annotations and axes
  texts, legends (each as one box) and colorbar labels -- overlaps by less than
  :data:`TOLERANCE` display pixels in either direction, tick labels included against those (a
  title on the tick labels of the panel above, a y label over a neighbour's ticks);
* a legend or an annotation/axes text does not cover a plotted line or marker of its own axes
  (its path crossing the box: :meth:`matplotlib.path.Path.intersects_bbox` and the vertices
  inside the box).  A text may sit on its own line when it says so: an artist with
  ``set_gid("on-curve")`` is exempt from the curve check;
* a text that clips to its axes lies inside them, and every text lies inside the figure.

:func:`statmech.figures.save` runs the checks on every figure it saves and records the problems
in :data:`PROBLEMS` (path -> list of messages); ``tests/test_figures.py`` renders every figure and
asserts the list is empty.
"""
from __future__ import annotations

import itertools

__all__ = ["problems", "PROBLEMS", "TOLERANCE"]

#: overlap (display pixels, in both directions) below which two boxes are taken as touching
TOLERANCE = 1.0

#: problems of the figures saved in this process, by path
PROBLEMS: dict = {}


def _visible_text(t):
    return t is not None and t.get_visible() and t.get_text().strip() != ""


def _name(artist, ax_index):
    kind = type(artist).__name__
    text = artist.get_text() if hasattr(artist, "get_text") else ""
    if kind == "Legend":
        text = "legend"
    where = f"axes {ax_index}" if ax_index is not None else "figure"
    return f"{kind} {text[:40]!r} ({where})"


def _overlap(a, b):
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > TOLERANCE and h > TOLERANCE


def _texts(fig, renderer):
    """(name, bbox, axes index or None, artist, is_tick) of every visible text-like artist."""
    out = []
    axes = fig.get_axes()
    for t in fig.texts:
        if _visible_text(t):
            out.append((_name(t, None), t.get_window_extent(renderer), None, t, False))
    if getattr(fig, "_suptitle", None) is not None and _visible_text(fig._suptitle):
        out.append(("suptitle", fig._suptitle.get_window_extent(renderer), None, fig._suptitle, False))
    for leg in fig.legends:
        if leg.get_visible():
            out.append(("figure legend", leg.get_window_extent(renderer), None, leg, False))
    for i, ax in enumerate(axes):
        if not ax.get_visible():
            continue
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            if _visible_text(t):
                out.append((_name(t, i), t.get_window_extent(renderer), i, t, False))
        for t in ax.texts:
            if _visible_text(t):
                out.append((_name(t, i), t.get_window_extent(renderer), i, t, False))
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            out.append((f"legend (axes {i})", leg.get_window_extent(renderer), i, leg, False))
        ab = ax.get_window_extent(renderer)
        for axis, along in ((ax.xaxis, 0), (ax.yaxis, 1)):
            for t in axis.get_ticklabels(which="both"):
                if not _visible_text(t):
                    continue
                box = t.get_window_extent(renderer)
                # a label of a tick outside the view interval is not drawn
                c = 0.5 * (box.x0 + box.x1) if along == 0 else 0.5 * (box.y0 + box.y1)
                lo, hi = (ab.x0, ab.x1) if along == 0 else (ab.y0, ab.y1)
                if lo - TOLERANCE <= c <= hi + TOLERANCE:
                    out.append((_name(t, i), box, i, t, True))
    return out


def _same_axis_ticks(a, b):
    """Two tick labels of one axis (their spacing is matplotlib's business)."""
    return a[4] and b[4] and a[2] == b[2]


def _lines_under(ax, box, artist, renderer):
    """Lines/markers of ``ax`` that cross ``box`` (display coordinates) where they are drawn: a
    line clipped to its axes is only visible inside them."""
    from matplotlib.transforms import Bbox
    hits = []
    inside_axes = Bbox.intersection(box, ax.get_window_extent(renderer))
    for line in ax.get_lines():
        if not line.get_visible() or line.get_gid() == "on-curve" or artist.get_gid() == "on-curve":
            continue
        path = line.get_path()
        if len(path.vertices) == 0:
            continue
        b = inside_axes if line.get_clip_on() else box
        if b is None or b.width <= TOLERANCE or b.height <= TOLERANCE:
            continue
        tpath = line.get_transform().transform_path(path)
        crosses = line.get_linestyle() not in ("None", "none", "", " ") and tpath.intersects_bbox(b, filled=False)
        inside = ((tpath.vertices[:, 0] > b.x0) & (tpath.vertices[:, 0] < b.x1)
                  & (tpath.vertices[:, 1] > b.y0) & (tpath.vertices[:, 1] < b.y1)).any()
        if crosses or inside:
            hits.append(line.get_label() if not line.get_label().startswith("_") else "a curve")
    for coll in ax.collections:   # scatter points, error bars
        if not coll.get_visible() or coll.get_gid() == "on-curve" or artist.get_gid() == "on-curve":
            continue
        offs = coll.get_offsets()
        b = inside_axes if coll.get_clip_on() else box
        if len(offs) == 0 or not hasattr(coll, "get_offset_transform") or b is None:
            continue
        pts = coll.get_offset_transform().transform(offs)
        if ((pts[:, 0] > b.x0) & (pts[:, 0] < b.x1) & (pts[:, 1] > b.y0) & (pts[:, 1] < b.y1)).any():
            hits.append(coll.get_label() if not str(coll.get_label()).startswith("_") else "points")
    return hits


def problems(fig):
    """Every layout problem of ``fig`` (a list of one-line messages; empty when it is clean)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = _texts(fig, renderer)
    out = []
    for a, b in itertools.combinations(texts, 2):
        if a[3] is b[3] or _same_axis_ticks(a, b) or (a[4] and b[4]):
            continue
        if _overlap(a[1], b[1]):
            out.append(f"{a[0]} overlaps {b[0]}")
    axes = fig.get_axes()
    fig_box = fig.bbox
    for name, box, i, artist, is_tick in texts:
        if is_tick:
            continue
        if box.x0 < fig_box.x0 - TOLERANCE or box.y0 < fig_box.y0 - TOLERANCE \
                or box.x1 > fig_box.x1 + TOLERANCE or box.y1 > fig_box.y1 + TOLERANCE:
            # savefig(bbox_inches="tight") widens the canvas for text outside it; only text that
            # clips is lost, checked next -- but a legend placed outside must still be inside
            if type(artist).__name__ == "Legend" and artist.get_bbox_to_anchor() is None:
                out.append(f"{name} lies outside the figure")
        if i is None:
            continue
        ax = axes[i]
        if artist in ax.texts or type(artist).__name__ == "Legend":
            if getattr(artist, "get_clip_on", lambda: False)() and type(artist).__name__ != "Legend":
                ab = ax.get_window_extent(renderer)
                if box.x0 < ab.x0 - TOLERANCE or box.x1 > ab.x1 + TOLERANCE or box.y0 < ab.y0 - TOLERANCE \
                        or box.y1 > ab.y1 + TOLERANCE:
                    out.append(f"{name} is clipped by its axes")
            hits = _lines_under(ax, box, artist, renderer)
            if hits:
                out.append(f"{name} covers {', '.join(sorted(set(map(str, hits)))[:4])}")
    return out
