"""The front door: ``compiler`` (SQL → plans → dataflow), ``view`` (the ``MaintainedView`` API),
``explain`` (EXPLAIN as text or JSON), ``cli`` (``ivm``) and ``demo``.

The modules directly in this package sit on top and may import every layer below; the
subpackages are those layers (``ir``, ``sql``, ``optimizer``, ``workloads``) and never import the
front door.
"""
