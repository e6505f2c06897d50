"""SourceSum Bench: a benchmark harness for source sentence detection in summarization."""

__version__ = "0.2.0"
