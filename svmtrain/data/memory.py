"""What memory the machine has free: how much a run may add for a copy that only saves time."""
import os


def available_bytes():
    """The kernel's estimate of the memory available without swapping
    (``MemAvailable`` of /proc/meminfo), else the free physical pages, else 1 GiB."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 30
