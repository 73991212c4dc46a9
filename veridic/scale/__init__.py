"""Scale-out scoring of large pair files on Ray Data (the ``ray`` extra).

>>> from veridic.scale import row_ids
>>> row_ids([{"id": "a"}, {"id": "b"}])
['a', 'b']
"""

from veridic.scale._ray_engine import RayScoreReport, row_ids, score_file_ray

__all__ = ["RayScoreReport", "row_ids", "score_file_ray"]
