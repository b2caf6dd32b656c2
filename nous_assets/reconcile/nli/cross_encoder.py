"""The ``cross-encoder`` classifier: a sentence-transformers ``CrossEncoder`` NLI model from a local directory.

The user points ``nli.model_dir`` at a model saved on disk (e.g. an NLI cross-encoder they downloaded
themselves); it is loaded with ``local_files_only`` and never fetched. Its labels come from the model's
``id2label`` config (entailment / neutral / contradiction in any order and case); the confidence is the
softmax probability of the winning label. The model version is the directory name plus a digest of its
config, so pointing at another model re-classifies every pair.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nous_assets.reconcile.nli.base import LABELS, ClassifierUnavailable, Verdict


class CrossEncoderClassifier:
    name = "cross-encoder"

    def __init__(self, model_dir: str | Path, *, batch_size: int = 32) -> None:
        self.model_dir = Path(model_dir).expanduser()
        config = self.model_dir / "config.json"
        if not config.is_file():
            raise ClassifierUnavailable(f"nli.model_dir {self.model_dir} holds no model (config.json missing)")
        digest = hashlib.sha256(config.read_bytes()).hexdigest()[:12]
        self.model_version = f"cross-encoder-{self.model_dir.name}-{digest}"
        self.batch_size = batch_size
        self._model: Any = None
        self._labels: list[str] = []

    def _load(self) -> Any:
        if self._model is None:
            from sentence_transformers import CrossEncoder

            try:
                model = CrossEncoder(str(self.model_dir), local_files_only=True, device="cpu")
            except (OSError, ValueError) as exc:
                raise ClassifierUnavailable(f"cannot load cross-encoder from {self.model_dir}: {exc}") from None
            id2label = model.config.id2label
            labels = [str(id2label[i]).lower() for i in range(len(id2label))]
            if sorted(labels) != sorted(LABELS):
                raise ClassifierUnavailable(f"cross-encoder in {self.model_dir} has labels {labels}, not {LABELS}")
            self._model, self._labels = model, labels
        return self._model

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        if not pairs:
            return []
        model = self._load()
        probs = model.predict(list(pairs), batch_size=self.batch_size, apply_softmax=True, show_progress_bar=False)
        out = []
        for row in probs:
            best = int(row.argmax())
            out.append(Verdict(self._labels[best], round(float(row[best]), 4), reason="cross-encoder"))
        return out
