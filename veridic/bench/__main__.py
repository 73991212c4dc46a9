"""``python -m veridic.bench`` runs the ``veridic bench`` command standalone."""

from veridic.bench.cli import main

if __name__ == "__main__":
    main()
