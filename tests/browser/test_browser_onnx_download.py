"""The page's ONNX downloads: the Compile view's summary offers the compiled model as ONNX beside its weights,
and the "Every length" panel offers a length-free model's graph once it is compiled. Each download (the
browser's download event) is a valid ONNX file (onnx's full check) that onnxruntime runs, giving the
compiled model's output; the links have accessible names."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import rasplay
from rasplay.server.links import link_fragment
from support.browser_kit import open_app
from support.needs import need

pytestmark = pytest.mark.browser

if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    import onnx  # noqa: F401  (make test installs the onnx extra: in CI this test must run, never skip)
else:
    onnx = need("onnx")
    need("onnxruntime")

from rasplay.interop import load_onnx  # noqa: E402

DYCK = (Path(__file__).resolve().parents[1] / "length_free_programs" / "dyck1.rasp").read_text()


def downloaded(page, selector: str, tmp_path) -> bytes:
    with page.expect_download() as info:
        page.click(selector)
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    assert path.suffix == ".onnx", path
    data = path.read_bytes()
    assert data, "an empty download"
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data


def test_compile_view_downloads_the_model_as_onnx(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#tab-compile")
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#onnx-download")
    link = page.get_by_role("link", name="Download as ONNX (.onnx)")
    assert link.count() == 1 and link.get_attribute("href").endswith("/model.onnx")
    runner = load_onnx(downloaded(page, "#onnx-download", tmp_path))
    assert runner.run(["hello", "oh"]) == [list("olleh"), list("ho")]          # the page's example, reverse


def test_every_length_panel_downloads_a_length_free_model(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url, "/#" + link_fragment({"source": DYCK, "inputs": ["(()"]}))
    assert page.is_hidden("#lf-downloads")
    page.click("#tab-compile")
    page.fill("#compile-vocab", "()")
    page.click("#lf-compile")
    page.wait_for_selector("#lf-downloads:not([hidden])", timeout=60_000)
    assert page.get_by_role("link", name="Download as ONNX (.onnx, any length)").count() == 1
    runner = load_onnx(downloaded(page, "#lf-onnx-download", tmp_path))
    model = rasplay.compile(DYCK, vocab="()", length_free=True)
    inputs = ["(()", "(" * 100 + ")" * 100]                                  # longer than any max_len here
    assert runner.run(inputs) == model.run(inputs)["outputs"]
    page.wait_for_selector("#lf-status[data-state='done']", timeout=120_000)  # the study still finishes
