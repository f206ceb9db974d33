"""The pure, deterministic rules engine. Entry point for everything else: :mod:`services.rules.api`."""
