"""(alpha,k)-anonymity by local recoding: Progressive and Top-Down (Wong, Li, Fu, Wang).

Rows of one column are released at different hierarchy levels: a rare record no longer drags
every record of the table up the hierarchy, as a full-domain generalization does. Both
algorithms return a :class:`~anonlab.release.Levels` recoding (a level vector per row) that
the release layer applies and re-checks with the job's models.

References
----------
.. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data publishing",
   J. Intell. Inf. Syst. 33 (2009), sections 4 and 6.
"""

from anonlab.algorithms.local_recoding.anonymizers import (
    LocalRecodingStats,
    Progressive,
    ProgressiveStats,
    TopDown,
    TopDownStats,
)

__all__ = ["LocalRecodingStats", "Progressive", "ProgressiveStats", "TopDown", "TopDownStats"]
