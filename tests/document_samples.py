"""Real images, PDFs and notebooks for the reader tests and benchmarks, made with the
same libraries the readers use (Pillow, pypdf, nbformat), plus the real-world files
that well-known packages ship (matplotlib's sample data, papermill's test notebooks)."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

# --- images -----------------------------------------------------------------------------


def screenshot(width: int = 2880, height: int = 1800) -> Image.Image:
    """An editor-like screenshot: flat panels and many lines of anti-aliased text."""
    img = Image.new("RGB", (width, height), (30, 30, 30))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, width, 60), fill=(50, 50, 55))
    draw.rectangle((0, 60, width // 6, height), fill=(37, 37, 38))
    font = ImageFont.load_default(size=max(10, height // 70))
    rnd = random.Random(1)
    words = [
        "def",
        "class",
        "return",
        "import",
        "from",
        "self",
        "value",
        "result",
        "for",
        "in",
        "if",
        "else",
        "while",
    ]
    step = max(12, height // 50)
    for i, y in enumerate(range(80, height - step, step)):
        draw.text((20, y), f"file_{i}.py", fill=(200, 200, 200), font=font)
        line = " ".join(rnd.choice(words) for _ in range(rnd.randint(2, 12)))
        colour = (rnd.randint(150, 255), rnd.randint(150, 255), 200)
        draw.text((width // 6 + 40, y), f"{i + 1:4d}  {line}", fill=colour, font=font)
    return img


def photo(width: int = 4032, height: int = 3024, seed: int = 0) -> Image.Image:
    """A photo-like picture: smooth shapes under sensor-like noise (many colours)."""
    small = (max(1, width // 16), max(1, height // 16))
    base = Image.merge(
        "RGB",
        (
            Image.effect_noise(small, 60),
            Image.linear_gradient("L").resize(small),
            Image.effect_mandelbrot(small, (-2, -1.5, 1, 1.5), 60 + seed),
        ),
    ).resize((width, height), Image.Resampling.BICUBIC)
    return Image.blend(base, Image.effect_noise((width, height), 25).convert("RGB"), 0.15)


def encode(img: Image.Image, fmt: str, **options: Any) -> bytes:
    out = io.BytesIO()
    img.save(out, fmt, **options)
    return out.getvalue()


def decode(b64: str) -> Image.Image:
    img = Image.open(io.BytesIO(base64.b64decode(b64)))
    img.load()
    return img


# --- PDFs -------------------------------------------------------------------------------


def page_text(number: int, lines: int = 40, seed: int = 0) -> str:
    rnd = random.Random(seed * 100_003 + number)
    words = [
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
        "sed",
        "do",
        "eiusmod",
    ]
    return "\n".join(
        f"Page {number} line {j}: " + " ".join(rnd.choice(words) for _ in range(11))
        for j in range(lines)
    )


def text_pdf(
    texts: list[str],
    user_password: str | None = None,
    owner_password: str | None = None,
) -> bytes:
    """A PDF whose pages hold `texts` (Helvetica, one text line per line)."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    font_ref = writer._add_object(font)
    for text in texts:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
        )
        ops = ["BT", "/F1 10 Tf", "13 TL", "56 750 Td"]
        for line in text.split("\n"):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page.compress_content_streams()
    if user_password is not None:
        writer.encrypt(
            user_password=user_password,
            owner_password=owner_password or "owner",
            algorithm="AES-256",
        )
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def numbered_pdf(pages: int, lines: int = 40, seed: int = 0) -> bytes:
    return text_pdf([page_text(n, lines, seed) for n in range(1, pages + 1)])


def image_only_pdf(pages: int = 2) -> bytes:
    """A 'scanned' PDF: each page one picture, no text layer (Pillow draws, pypdf writes)."""
    images = [screenshot(850, 1100) for _ in range(pages)]
    raw = io.BytesIO()
    images[0].save(raw, "PDF", save_all=True, append_images=images[1:], resolution=100)
    writer = PdfWriter(clone_from=io.BytesIO(raw.getvalue()))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# --- notebooks --------------------------------------------------------------------------


def png_b64(width: int, height: int, colour: tuple[int, int, int] = (200, 40, 40)) -> str:
    return base64.b64encode(encode(Image.new("RGB", (width, height), colour), "PNG")).decode()


def every_output_notebook() -> dict[str, Any]:
    """A v4.5 notebook with every kind of cell and output."""
    from nbformat import v4

    red = "\x1b[0;31m"
    reset = "\x1b[0m"
    nb = v4.new_notebook(
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        }
    )
    nb.cells = [
        v4.new_markdown_cell(
            "# Title\n![x](attachment:x.png)",
            attachments={"x.png": {"image/png": png_b64(4, 4)}},
        ),
        v4.new_code_cell(
            "print('hi')\nimport sys; print('oops', file=sys.stderr)",
            execution_count=1,
            outputs=[
                v4.new_output("stream", name="stdout", text="hi\n"),
                v4.new_output("stream", name="stderr", text="oops\n"),
            ],
        ),
        v4.new_code_cell(
            "41 + 1",
            execution_count=2,
            outputs=[v4.new_output("execute_result", {"text/plain": "42"}, execution_count=2)],
        ),
        v4.new_code_cell(
            "plot()",
            execution_count=3,
            outputs=[
                v4.new_output(
                    "display_data",
                    {
                        "image/png": png_b64(640, 480),
                        "text/plain": "<Figure size 640x480 with 1 Axes>",
                    },
                )
            ],
        ),
        v4.new_code_cell(
            "df",
            execution_count=4,
            outputs=[
                v4.new_output(
                    "execute_result",
                    {
                        "text/html": "<table><tr><td>1</td></tr></table>" * 50,
                        "text/plain": "   a\n0  1",
                    },
                    execution_count=4,
                )
            ],
        ),
        v4.new_code_cell(
            "display(Javascript('alert(1)'))",
            execution_count=5,
            outputs=[v4.new_output("display_data", {"application/javascript": "alert(1)"})],
        ),
        v4.new_code_cell(
            "1 / 0",
            execution_count=6,
            outputs=[
                v4.new_output(
                    "error",
                    ename="ZeroDivisionError",
                    evalue="division by zero",
                    traceback=[
                        f"{red}---------------------------------------------------------{reset}",
                        f"{red}ZeroDivisionError{reset}   Traceback (most recent call last)",
                        "Cell In[6], line 1\n----> 1 1 / 0",
                        f"{red}ZeroDivisionError{reset}: division by zero",
                    ],
                )
            ],
        ),
        v4.new_code_cell("not_run_yet()"),
        v4.new_raw_cell("raw text"),
    ]
    return dict(nb)


def code_notebook(sources: list[str], outputs: list[dict[str, Any]] | None = None) -> str:
    """A v4.5 notebook (as its JSON text) of a code cell per source, each with `outputs`."""
    cells = [
        {
            "cell_type": "code",
            "execution_count": n,
            "id": f"c{n}",
            "metadata": {},
            "source": source,
            "outputs": outputs or [],
        }
        for n, source in enumerate(sources)
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def png_output(png: bytes) -> dict[str, Any]:
    """A display_data output showing `png`."""
    data = {"image/png": base64.b64encode(png).decode()}
    return {"output_type": "display_data", "metadata": {}, "data": data}


def notebook_with_plots(target_bytes: int, seed: int = 0) -> dict[str, Any]:
    """A notebook of code cells with text and PNG plot outputs, about `target_bytes` big."""
    from nbformat import v4

    rnd = random.Random(seed)
    nb = v4.new_notebook(
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        }
    )
    size = 0
    n = 0
    while size < target_bytes:
        n += 1
        plot = encode(photo(480, 320, seed=n), "PNG")
        source = "\n".join(f"x{j} = compute({rnd.random():.6f})" for j in range(8))
        cell = v4.new_code_cell(
            source + "\nplt.plot(x0)",
            execution_count=n,
            outputs=[
                v4.new_output("stream", name="stdout", text=f"step {n}: loss={rnd.random()}\n"),
                v4.new_output(
                    "display_data",
                    {
                        "image/png": base64.b64encode(plot).decode(),
                        "text/plain": "<Figure size 480x320 with 1 Axes>",
                    },
                ),
            ],
        )
        nb.cells.append(cell)
        size += len(plot) * 4 // 3 + len(source) + 300
    return dict(nb)


# --- real-world files shipped by well-known packages ------------------------------------


def _package_dir(name: str) -> Path:
    """Where an installed package lives, without importing it."""
    spec = importlib.util.find_spec(name)
    assert spec is not None, f"{name} is not installed"
    assert spec.submodule_search_locations, f"{name} is not a package"
    return Path(next(iter(spec.submodule_search_locations)))


def matplotlib_data() -> Path:
    return _package_dir("matplotlib") / "mpl-data"


def papermill_notebooks() -> Path:
    return _package_dir("papermill") / "tests" / "notebooks"


def pdf_of(objects: list[bytes]) -> bytes:
    """A PDF of `objects` as written (object 1 the catalog), with its cross-reference
    table: for files pypdf's writer would not make (loops, shared or odd page trees)."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
