"""Incremental views in Spark Declarative Pipelines (docs/spark.md, "Spark Declarative Pipelines").

``incremental_view`` declares one in a pipeline definition file; ``ivm pipelines run`` runs the
pipeline (``launcher``); ``ivm pipelines land`` adds a slice of a stream to a view's change files
(``landing``).
"""

from planner.pipelines.definitions import PipelineView, PipelineViewError, incremental_view

__all__ = ["PipelineView", "PipelineViewError", "incremental_view"]
