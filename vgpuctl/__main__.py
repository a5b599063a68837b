"""`python -m vgpuctl …`: the same command as `vgpuctl …` (where the console script is not on PATH)."""

from vgpuctl.cli.app import main

if __name__ == "__main__":
    main()
