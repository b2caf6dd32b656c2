"""The heuristic extractor's rule families, one module each (see :mod:`nous_assets.extract.heuristic`).

Shared ground: :mod:`.text` (sentences, quotes, what a sentence names), :mod:`.shell` (commands and their
results), :mod:`.session` (streams, tool calls, user messages, task prompts), :mod:`.filters` (what must
never become a memory), :mod:`.retraction` (the assistant taking back its last step) and :mod:`.render`
(selection and the record shape). Rule families: :mod:`.speech` (dispatching user messages to
:mod:`.corrections`, :mod:`.preferences`, :mod:`.decisions`), :mod:`.gotchas`, :mod:`.compaction`,
:mod:`.workflow`, :mod:`.configuration`, :mod:`.architecture`, :mod:`.environment`; :mod:`.evidence` gives every
candidate its status.
"""
