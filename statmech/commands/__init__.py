"""CLI subcommands: one module per model, each with ``register(subparsers)``."""
