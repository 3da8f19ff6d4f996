"""The wait before a retry, one rule for judge calls and app calls.

The server's ``Retry-After`` when it gave one (at least 0, at most ``max_retry_wait``); else
"full jitter" exponential backoff: uniform in ``[0, min(max_backoff, backoff * 2**attempt)]``
(``attempt`` 0-based), so clients that failed together do not retry together.
"""

from __future__ import annotations

import random


def retry_delay(attempt: int, retry_after: float | None, *, backoff: float, max_backoff: float,
                max_retry_wait: float) -> float:
    """Seconds to wait before retry ``attempt`` (the module docstring's rule).

    >>> retry_delay(3, 7.0, backoff=1.0, max_backoff=30.0, max_retry_wait=5.0)
    5.0
    >>> 0.0 <= retry_delay(2, None, backoff=1.0, max_backoff=3.0, max_retry_wait=60.0) <= 3.0
    True
    """
    if retry_after is not None:
        return min(max(0.0, float(retry_after)), max_retry_wait)
    return random.uniform(0, min(max_backoff, backoff * 2**attempt))
