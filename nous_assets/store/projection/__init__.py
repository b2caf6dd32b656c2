"""What the log means: the memory row, ``Policy`` and what each event does to it (``memory_state``), and
project identity (``identity``)."""
