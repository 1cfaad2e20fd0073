r"""Small feed-forward networks with exact Hessians: the Hessian-spectrum study of Milletarí et al.

Milletarí, Chotibut & Trevisanutto, "Mean Field Theory of Activation Functions in Deep Neural
Networks", arXiv:1805.08786 (ICML 2019 Workshop on Theoretical Physics for Deep Learning;
Sec. 3, App. B, Fig. 1), and the first, longer version of the same preprint (v1, 2018, "Expectation
propagation: a probabilistic view of Deep Feed Forward Networks", App. B) train small fully connected
networks with full-batch Adam on two synthetic binary tasks and follow, over training,
the loss, the fraction ``alpha`` of negative Hessian eigenvalues (descent directions),
the fraction ``gamma`` of (near-)zero eigenvalues (flat directions) and the eigenvalue
histograms, for ReLU, ESP/Swish (``x sigma(beta x)``, beta fixed or trainable) and sigmoid
hidden units.  This module does that from scratch (numpy only, no autograd):

* Tasks (:func:`linear_task`, :func:`nonlinear_task`, :func:`digits_task`), generated
  reproducibly from a seed.  The papers' own data sets come with the authors' code
  (github.com/WessZumino/expectation_propagation) and are not used here; ours have the same sizes (51 and 863 points, 2 features):
  the linear task is uniform on [-1, 1]^2 labelled by a fixed line (separable with a
  margin of 0.05), the non-linear task is two interleaved half-moons with Gaussian noise
  (std 0.15, not linearly separable).  :func:`digits_task` is scikit-learn's bundled 8x8
  digits (1797 examples, 64 features, 10 classes; the data ship inside the wheel, no
  download), an optional dependency (``pip install statmech[digits]``).
* Network: ``sizes = (d, n_1, ..., n_L, n_out)``; hidden layers ``z = phi(z W + b)``; the
  output is a sigmoid unit with binary cross-entropy (``n_out = 1``) or a softmax with
  categorical cross-entropy, both written in the stable form ``softplus(h) - y h`` /
  ``logsumexp(h) - y.h``; the loss is the mean over examples (Milletarí et al. 2019, App. A, Eq. 16).
  Parameters per layer: ``W`` (row-major), ``b``, and for trainable ESP one ``beta_i`` per
  hidden unit (Milletarí et al. 2019, Eq. 2, has a noise ``beta_i`` per unit).
* Exact gradient (back-propagation) and exact Hessian, assembled layer by layer
  (:mod:`statmech.simulate._net_hessian`): a backward recursion gives, per example, the
  second derivatives of the loss with respect to each layer's pre-activations (and
  trainable betas), ``G_k = J^T W_{k+1} G_{k+1} W_{k+1}^T J + eps_k phi''``, and every block of
  parameters is then one sum over examples of Kronecker products (one BLAS-3 product).
  The activation derivatives ``phi_h, phi_hh, phi_beta, phi_hbeta, phi_betabeta`` come from
  the sympy kernels of :mod:`statmech.activations`.  ReLU has ``phi_hh = 0`` (its Hessian is
  exact almost everywhere).  Verified against central finite differences of the exact
  gradient and of the loss, and against Pearlmutter's R-operator on every unit direction
  (the previous implementation), in the tests.
* Full-batch Adam (Kingma & Ba, defaults beta1 = 0.9, beta2 = 0.999, eps = 1e-8, learning rate
  0.01 as in Milletarí et al. 2019, Fig. 1).
* Indices at each checkpoint, with ``lambda_max = max |lambda|`` and the documented
  threshold ``tau = zero_tol * lambda_max`` (``zero_tol = 1e-5`` by default):
  ``alpha = #{lambda < -tau}/P`` (negative), ``gamma = #{|lambda| <= tau}/P`` (near-zero),
  so negative, zero and positive fractions add up to one.  Also the training accuracy and
  the fraction of "zero residuals" ``|y_hat - y| <= residual_tol`` (0.05), Milletarí et al. 2019, Fig. 1c.

Public API: ``Task``, ``linear_task``, ``nonlinear_task``, ``digits_task``, ``Network``,
``TrainingRun``, ``train_network``, ``hessian_indices``, ``hessian_study``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._blas import single_thread_blas
from ._net_hessian import network_hessian
from ._result import Simulation
from ..errors import check_choice, check_int, check_range

__all__ = ["Task", "linear_task", "nonlinear_task", "digits_task", "Network", "TrainingRun",
           "train_network", "hessian_indices", "hessian_study", "ACTIVATIONS"]

#: hidden-unit activations of :class:`Network` (``activation``)
ACTIVATIONS = ("relu", "esp", "esp_trainable", "sigmoid")


# --------------------------------------------------------------------------- tasks
@dataclass(frozen=True)
class Task:
    """A classification data set: ``X`` (m, d), ``Y`` (m, n_out) 0/1 targets (one-hot for n_out > 1)."""
    name: str
    X: np.ndarray
    Y: np.ndarray

    @property
    def m(self):
        return self.X.shape[0]

    @property
    def d(self):
        return self.X.shape[1]

    @property
    def n_out(self):
        return self.Y.shape[1]


def linear_task(n=51, seed=0, margin=0.05):
    """Linearly separable binary task: x uniform on [-1, 1]^2, y = 1{x2 > 0.6 x1 + 0.1}.

    Points within ``margin`` of the line are redrawn, so the task is separable with that
    margin.  Reproducible from ``seed``; Milletarí et al. use 51 points.
    """
    n = check_int("n", n, 2)
    rng = np.random.default_rng(check_int("seed", seed, 0))
    w = np.array([-0.6, 1.0]) / math.hypot(0.6, 1.0)
    c = -0.1 / math.hypot(0.6, 1.0)
    X = np.empty((0, 2))
    while X.shape[0] < n:
        x = rng.uniform(-1.0, 1.0, size=(2 * n, 2))
        X = np.vstack([X, x[np.abs(x @ w + c) > margin]])
    X = X[:n]
    y = (X @ w + c > 0).astype(float)
    return Task("linear", X, y[:, None])


def nonlinear_task(n=863, seed=0, noise=0.15):
    """Non-linear binary task: two interleaved half-moons (radius 1) with Gaussian noise.

    Class 0: (cos t, sin t), class 1: (1 - cos t, 1/2 - sin t), t uniform on [0, pi], plus
    N(0, noise^2) per coordinate, then centred.  Milletarí et al. use 863 points.
    """
    n = check_int("n", n, 2)
    noise = float(check_range("noise", noise, 0.0, math.inf))
    rng = np.random.default_rng(check_int("seed", seed, 0))
    n0 = (n + 1) // 2
    lab = np.r_[np.zeros(n0), np.ones(n - n0)]
    t = rng.uniform(0.0, math.pi, size=n)
    X = np.where(lab[:, None] == 0, np.c_[np.cos(t), np.sin(t)], np.c_[1 - np.cos(t), 0.5 - np.sin(t)])
    X = X + noise * rng.standard_normal((n, 2)) - np.array([0.5, 0.25])
    perm = rng.permutation(n)
    return Task("nonlinear", X[perm], lab[perm][:, None])


def digits_task():
    """scikit-learn's bundled 8x8 handwritten digits: 1797 x 64 (pixels / 16), 10 classes.

    Optional: needs ``scikit-learn`` (extra ``statmech[digits]``); the data are shipped
    inside the package, nothing is downloaded.  Raises ImportError with a hint otherwise.
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("digits_task needs scikit-learn (pip install 'statmech[digits]')") from exc
    d = load_digits()
    X = d.data.astype(float) / 16.0
    Y = np.eye(10)[d.target]
    return Task("digits", X, Y)


# --------------------------------------------------------------------------- activations
def _phi(kind, h, beta, second=True):
    """phi and its derivatives: dict with f, f_h (f_b when trainable), and with ``second``
    also f_hh (f_hb, f_bb when trainable), from the sympy kernels of statmech.activations."""
    from .. import activations as A
    if kind == "relu":
        pos = (h > 0).astype(float)
        return {"f": h * pos, "f_h": pos, "f_hh": np.zeros_like(h)}
    out = A.gate_derivatives(h, 1.0) if kind == "sigmoid" else A.esp_parameter_derivatives(h, beta)
    keep = ("f", "f_h") + (("f_b",) if kind == "esp_trainable" else ())
    if second:
        keep += ("f_hh",) + (("f_hb", "f_bb") if kind == "esp_trainable" else ())
    return {k: out[k] for k in keep}


# --------------------------------------------------------------------------- network
@dataclass(frozen=True)
class Network:
    """Fully connected network ``sizes = (d, n_1, ..., n_out)`` with hidden ``activation``.

    ``activation`` in ``ACTIVATIONS``; ``beta`` is the ESP noise parameter (fixed, or the
    initial value of the per-unit trainable betas).  Parameters are one flat vector.
    """
    sizes: tuple
    activation: str = "esp"
    beta: float = 1.0

    def __post_init__(self):
        sizes = tuple(check_int("sizes", s, 1) for s in self.sizes)
        if len(sizes) < 2:
            raise ValueError(f"sizes must have at least 2 entries (input and output), got {self.sizes!r}")
        object.__setattr__(self, "sizes", sizes)
        check_choice("activation", self.activation, ACTIVATIONS)
        object.__setattr__(self, "beta", float(check_range("beta", self.beta, 0.0, math.inf)))

    @property
    def trainable_beta(self):
        return self.activation == "esp_trainable"

    def _layout(self):
        lay, k = [], 0
        L = len(self.sizes) - 1
        for l in range(L):
            n_in, n_out = self.sizes[l], self.sizes[l + 1]
            ent = {"W": (k, k + n_in * n_out, (n_in, n_out))}
            k += n_in * n_out
            ent["b"] = (k, k + n_out, (n_out,))
            k += n_out
            if self.trainable_beta and l < L - 1:
                ent["beta"] = (k, k + n_out, (n_out,))
                k += n_out
            lay.append(ent)
        return lay, k

    @property
    def n_params(self):
        return self._layout()[1]

    def unpack(self, theta):
        """List of dicts {W, b[, beta]} (views into ``theta``, or of the last axis for stacks)."""
        lay, P = self._layout()
        theta = np.asarray(theta, dtype=float)
        if theta.shape[-1] != P:
            raise ValueError(f"theta must have {P} entries on its last axis, got shape {theta.shape}")
        lead = theta.shape[:-1]
        return [{k: theta[..., a:b].reshape(lead + s) for k, (a, b, s) in ent.items()} for ent in lay]

    def init(self, seed=0):
        """Glorot-normal weights, zero biases, betas = ``beta``."""
        rng = np.random.default_rng(check_int("seed", seed, 0))
        theta = np.zeros(self.n_params)
        for ent, (n_in, n_out) in zip(self.unpack(theta), zip(self.sizes[:-1], self.sizes[1:])):
            ent["W"][...] = rng.standard_normal((n_in, n_out)) * math.sqrt(2.0 / (n_in + n_out))
            if "beta" in ent:
                ent["beta"][...] = self.beta
        return theta

    # ----------------------------------------------------------------- forward / loss
    def _forward(self, theta, X, second=True):
        layers = self.unpack(theta)
        zs, hs, phis = [X], [], []
        for l, p in enumerate(layers):
            h = zs[-1] @ p["W"] + p["b"]
            hs.append(h)
            if l < len(layers) - 1:
                ph = _phi(self.activation, h, p.get("beta", self.beta), second)
                phis.append(ph)
                zs.append(ph["f"])
        return layers, zs, hs, phis

    @staticmethod
    def _out(h, Y):
        """Loss per example and output probabilities (sigmoid / softmax), stable forms."""
        if h.shape[1] == 1:
            sp_ = np.where(h > 0, h + np.log1p(np.exp(-np.abs(h))), np.log1p(np.exp(-np.abs(h))))
            p = np.where(h >= 0, 1.0 / (1.0 + np.exp(-np.abs(h))), np.exp(-np.abs(h)) / (1.0 + np.exp(-np.abs(h))))
            return (sp_ - Y * h)[:, 0], p
        mx = h.max(axis=1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(h - mx).sum(axis=1))
        p = np.exp(h - lse[:, None])
        return lse - (Y * h).sum(axis=1), p

    def loss(self, theta, task):
        """Mean cross-entropy loss (Milletarí et al. 2019, App. A, Eq. 16)."""
        _, _, hs, _ = self._forward(theta, task.X, False)
        return float(self._out(hs[-1], task.Y)[0].mean())

    def predict(self, theta, X):
        """Output probabilities (m, n_out)."""
        _, _, hs, _ = self._forward(theta, np.asarray(X, dtype=float), False)
        return self._out(hs[-1], np.zeros_like(hs[-1]))[1]

    def loss_and_grad(self, theta, task):
        """Loss and exact gradient (back-propagation, Milletarí et al. 2018, App. A, rederived)."""
        layers, zs, hs, phis = self._forward(theta, task.X, False)
        m = task.m
        ell, p = self._out(hs[-1], task.Y)
        delta = (p - task.Y) / m
        grads = [dict() for _ in layers]
        for l in range(len(layers) - 1, -1, -1):
            grads[l]["W"] = zs[l].T @ delta
            grads[l]["b"] = delta.sum(axis=0)
            if l > 0:
                eps = delta @ layers[l]["W"].T
                ph = phis[l - 1]
                if "beta" in layers[l - 1]:
                    grads[l - 1]["beta"] = (eps * ph["f_b"]).sum(axis=0)
                delta = eps * ph["f_h"]
        out = np.empty(theta.shape[-1])
        lay, _ = self._layout()
        for l, ent in enumerate(lay):
            for k, (a, b, _s) in ent.items():
                out[a:b] = grads[l][k].ravel()
        return float(ell.mean()), out

    def hessian(self, theta, task, block=None):
        """Exact Hessian (P x P) of the mean loss.

        Assembled layer by layer: the per-example second derivatives with respect to the
        pre-activations (and trainable betas) of each layer follow from one backward
        recursion, and every block of parameters is then a sum over examples of Kronecker
        products, one BLAS-3 product (:mod:`statmech.simulate._net_hessian`).  ``block`` =
        examples per chunk (None: ``max(256, 2^15 / (max(sizes) + 1)^2)``: small networks keep
        their temporaries in the cache, large ones get efficient GEMMs); the result depends on
        it only through round-off.
        """
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.n_params,):
            raise ValueError(f"theta must have shape ({self.n_params},), got {theta.shape}")
        block = max(256, 2 ** 15 // (max(self.sizes) + 1) ** 2) if block is None else check_int("block", block, 1)
        with single_thread_blas(2.0 * task.m * self.n_params ** 2):
            return network_hessian(self, theta, task, block)


# --------------------------------------------------------------------------- indices
def hessian_indices(eigenvalues, zero_tol=1e-5):
    """(alpha, gamma): fractions of negative and of near-zero Hessian eigenvalues.

    With ``tau = zero_tol * max|lambda|``: ``alpha = #{lambda < -tau}/P``,
    ``gamma = #{|lambda| <= tau}/P`` (Milletarí et al. 2019, Sec. 3; the paper gives no threshold, this is ours).
    """
    lam = np.asarray(eigenvalues, dtype=float)
    check_range("zero_tol", zero_tol, 0.0, 1.0)
    tau = zero_tol * np.max(np.abs(lam), axis=-1, keepdims=True)
    P = lam.shape[-1]
    return (np.sum(lam < -tau, axis=-1) / P, np.sum(np.abs(lam) <= tau, axis=-1) / P)


@dataclass(frozen=True, repr=False)
class TrainingRun(Simulation):
    """History of one training run (arrays over epochs / checkpoints).

    Protocol: the headline is ``final_loss`` (the loss after the last epoch, computed exactly:
    ``error`` 0.0); ``iterations`` = the epochs; ``stability`` = the ascending eigenvalues of the
    exact Hessian of the loss after the last epoch (positive = locally convex, a minimum) when
    the last epoch is a checkpoint, else None; ``converged`` True (Adam runs its fixed budget of
    epochs; a diverging run raises ConvergenceError); ``residual`` 0.0 (no gradient tolerance:
    the gradient at the end is not recorded); ``ansatz`` ``"-"``.
    """
    task: str
    sizes: tuple
    activation: str
    beta: float
    lr: float
    zero_tol: float
    loss: np.ndarray            # per epoch (index 0 = initial)
    checkpoints: np.ndarray     # epochs at which the Hessian was computed
    eigenvalues: np.ndarray     # (n_checkpoints, P), ascending
    alpha_index: np.ndarray     # fraction of negative eigenvalues
    gamma_index: np.ndarray     # fraction of near-zero eigenvalues
    accuracy: np.ndarray        # training accuracy at checkpoints
    zero_residuals: np.ndarray  # fraction of |y_hat - y| <= residual_tol at checkpoints
    theta: np.ndarray = field(repr=False, default=None)
    betas: np.ndarray = field(repr=False, default=None)  # trainable betas at checkpoints (or None)

    headline = "final_loss"
    converged = True
    residual = 0.0
    error = 0.0

    @property
    def n_params(self):
        return self.eigenvalues.shape[-1]

    @property
    def final_loss(self):
        """The loss after the last epoch."""
        return float(self.loss[-1])

    @property
    def iterations(self):
        """The epochs run."""
        return int(np.size(self.loss)) - 1

    @property
    def stability(self):
        """Hessian eigenvalues after the last epoch (None unless it is a checkpoint)."""
        ck = np.asarray(self.checkpoints)
        if ck.size and int(ck[-1]) == self.iterations and np.asarray(self.eigenvalues).ndim == 2:
            return np.asarray(self.eigenvalues)[-1]
        return None


def train_network(task, hidden=(10,), activation="esp", beta=1.0, epochs=2000, lr=0.01, seed=0,
                  n_checkpoints=20, zero_tol=1e-5, residual_tol=0.05, progress=False, checkpoints=None):
    """Full-batch Adam on ``task`` with exact Hessian spectra at log-spaced checkpoints.

    Parameters: ``hidden`` hidden-layer sizes ((10,) or (8, 2) in the paper), ``activation``
    in ``ACTIVATIONS``, ``beta`` ESP noise parameter (initial value if trainable), ``epochs``,
    learning rate ``lr`` (0.01 in the paper), ``seed`` of the initialization,
    ``n_checkpoints`` (epoch 0, the last epoch and log-spaced ones in between) or explicit
    ``checkpoints`` (epochs in [0, epochs]).
    """
    hidden = tuple(hidden)
    epochs = check_int("epochs", epochs, 1)
    lr = float(check_range("lr", lr, 0.0, math.inf, lo_open=True))
    n_checkpoints = check_int("n_checkpoints", n_checkpoints, 2)
    check_range("residual_tol", residual_tol, 0.0, 1.0)
    net = Network((task.d,) + hidden + (task.n_out,), activation, beta)
    with single_thread_blas(4.0 * net.n_params * task.m):     # work of one gradient
        return _train(net, task, hidden, activation, beta, epochs, lr, seed, n_checkpoints, zero_tol,
                      residual_tol, progress, checkpoints)


def _train(net, task, hidden, activation, beta, epochs, lr, seed, n_checkpoints, zero_tol, residual_tol,
           progress, checkpoints):
    theta = net.init(seed)
    if checkpoints is None:
        ck = np.unique(np.r_[0, np.round(np.geomspace(1, epochs, n_checkpoints - 1)).astype(int)])
    else:
        ck = np.unique([check_int("checkpoints", c, 0) for c in checkpoints])
        if ck.size == 0 or ck[-1] > epochs:
            raise ValueError(f"checkpoints must be non-empty epochs in [0, {epochs}], got {checkpoints!r}")
    b1, b2, eps = 0.9, 0.999, 1e-8
    mom = np.zeros_like(theta)
    vel = np.zeros_like(theta)
    losses = np.empty(epochs + 1)
    eigs, accs, zres, betas = [], [], [], []
    ck_set = set(ck.tolist())
    it = range(epochs + 1)
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(it, desc=f"{task.name} {hidden} {activation}", leave=False)
    for t in it:
        ell, g = net.loss_and_grad(theta, task)
        losses[t] = ell
        if t in ck_set:
            Hm = net.hessian(theta, task)
            eigs.append(np.linalg.eigvalsh(0.5 * (Hm + Hm.T)))
            p = net.predict(theta, task.X)
            if task.n_out == 1:
                accs.append(float(np.mean((p[:, 0] > 0.5) == (task.Y[:, 0] > 0.5))))
                zres.append(float(np.mean(np.abs(p[:, 0] - task.Y[:, 0]) <= residual_tol)))
            else:
                accs.append(float(np.mean(p.argmax(1) == task.Y.argmax(1))))
                zres.append(float(np.mean(np.abs(p - task.Y).max(axis=1) <= residual_tol)))
            if net.trainable_beta:
                betas.append(np.concatenate([ly["beta"] for ly in net.unpack(theta) if "beta" in ly]))
        if t == epochs:
            break
        if not np.all(np.isfinite(g)):
            from ..errors import ConvergenceError
            raise ConvergenceError("training diverged (non-finite gradient)", iterations=t,
                                   diagnostics={"lr": lr, "activation": activation})
        mom = b1 * mom + (1 - b1) * g
        vel = b2 * vel + (1 - b2) * g * g
        theta = theta - lr * (mom / (1 - b1 ** (t + 1))) / (np.sqrt(vel / (1 - b2 ** (t + 1))) + eps)
    eigs = np.array(eigs)
    a_idx, g_idx = hessian_indices(eigs, zero_tol)
    return TrainingRun(task.name, net.sizes, activation, float(beta), lr, zero_tol, losses, ck, eigs,
                       a_idx, g_idx, np.array(accs), np.array(zres), theta,
                       np.array(betas) if betas else None)


def hessian_study(tasks=None, hiddens=((10,), (8, 2)), activations=ACTIVATIONS, beta=1.0,
                  epochs=2000, lr=0.01, seed=0, n_checkpoints=20, zero_tol=1e-5, progress=True):
    """Run :func:`train_network` over tasks x architectures x activations (Milletarí et al. 2019, Fig. 1).

    ``tasks`` defaults to ``[linear_task(), nonlinear_task()]``.  Returns a dict keyed by
    ``(task_name, hidden, activation)``.  Shows a tqdm progress bar.
    """
    tasks = [linear_task(), nonlinear_task()] if tasks is None else list(tasks)
    for a in activations:
        check_choice("activation", a, ACTIVATIONS)
    combos = [(t, tuple(h), a) for t in tasks for h in hiddens for a in activations]
    it = combos
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(combos, desc="hessian study")
    out = {}
    for t, h, a in it:
        out[(t.name, h, a)] = train_network(t, h, a, beta, epochs, lr, seed, n_checkpoints, zero_tol)
    return out
