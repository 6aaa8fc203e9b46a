"""tqdm progress bars on stderr, shown only to a person at a terminal."""
import sys

# a bar appears only once its work has taken this long: short runs stay silent
DELAY_S = 0.5


class Progress:
    """A bar that is a no-op unless enabled (stderr is a tty and not -q)."""

    def __init__(self, enabled, desc, total=None, unit="it", unit_scale=False):
        self.bar = None
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale,
                            file=sys.stderr, leave=False, dynamic_ncols=True, delay=DELAY_S)

    def advance(self, n):
        if self.bar is not None:
            self.bar.update(n)

    def set_to(self, done, total, status=None):
        """Show ``done`` of ``total``; ``status`` (e.g. the duality gap) beside the bar."""
        if self.bar is not None:
            bar = self.bar
            bar.total = total
            bar.n = done
            if status is not None:
                bar.set_postfix_str(status, refresh=False)
            # as tqdm's update(): shown after DELAY_S, and last_print_t kept, without
            # which close() takes the bar for never shown and leaves it on the screen
            now = bar._time()
            if now >= bar.start_t + bar.delay:
                bar.refresh()
                bar.last_print_t = now

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def bars_wanted(quiet):
    return not quiet and sys.stderr.isatty()
