"""Contradiction detection between memories (the spec's "Temporal Reconciliation", NLI tier).

``base`` holds the classifier protocol and verdicts; ``rules`` (default, offline), ``llm`` (OpenAI-compatible
endpoint or ``claude --print``) and ``cross_encoder`` (a local sentence-transformers model) implement it;
``registry`` picks one from settings; ``pairs`` chooses which memories to compare and ``resolve`` turns
verdicts into ``nli_results`` rows and ``LearningContradicted`` / ``LearningSuperseded`` events.
"""
