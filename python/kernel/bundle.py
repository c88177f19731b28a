"""MIME bundles for display() and cell results (spec-eval.md P10, P11).

Types are recognised through ``type(obj).__module__``: the kernel never imports a library just
to check whether a value belongs to it. Binary payloads travel as base64 strings.
"""

import sys

PLAIN_MAX = 65536
IMAGE_MAX_SIDE = 2048
REPR_METHODS = (
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_json_", "application/json"),
    ("_repr_html_", "text/html"),
    ("_repr_latex_", "text/latex"),
)


def _dumps(obj, allow_nan):
    """``json.dumps(obj, allow_nan=...)`` through the kernel's codec (``codec.py``, loaded by
    the runner first), which spares the first cell ``import json``."""
    codec = sys.modules.get("_execkit_codec")
    if codec is None:
        import json

        return json.dumps(obj, allow_nan=allow_nan)
    return codec.encoder(True, (", ", ": "), allow_nan)(obj)


def _dumps_default(obj):
    return _dumps(obj, True)


def _dumps_strict(obj):
    return _dumps(obj, False)


def _b64(value):
    if isinstance(value, (bytes, bytearray)):
        import base64

        return base64.b64encode(bytes(value)).decode("ascii")
    return value


CUT_HINT = "print slices of the value to see more]"


def _cut_note(total):
    return ("\n[repr cut to its first %d of %d characters; the rest was never sent by the "
            "kernel and is not kept: %s" % (PLAIN_MAX, total, CUT_HINT))


def cut_text(text):
    """At most PLAIN_MAX characters, cut at a line or item boundary, with a note that says what
    was cut and that the rest is not kept anywhere."""
    if len(text) <= PLAIN_MAX:
        return text
    head = text[:PLAIN_MAX]
    for sep in ("\n", ", ", " "):
        at = head.rfind(sep)
        if at > PLAIN_MAX // 2:
            head = head[:at + len(sep)].rstrip()
            break
    return head + " …" + _cut_note(len(text))


def safe_repr(obj):
    try:
        text = repr(obj)
    except Exception as exc:  # noqa: BLE001 - a broken __repr__ must not fail the cell
        text = "<%s object (repr failed: %s)>" % (type(obj).__name__, exc)
    return cut_text(text)


BUILTIN_TYPES = (dict, list, tuple, set, frozenset, str, int, float, complex, bool, bytes)
# Laying out a huge container line by line costs seconds; beyond this repr length the flat
# repr is cut instead (what is shown is capped at PLAIN_MAX anyway).
PPRINT_MAX = 4 * PLAIN_MAX
# The JSON copy for programs is left out beyond this size (frames are at most 16 MiB).
JSON_COPY_MAX = 8 * 1024 * 1024


def _printer():
    import pprint

    class Printer(pprint.PrettyPrinter):
        # pprint splits long strings into implicitly concatenated pieces; the REPL and
        # Jupyter show a string as one literal, so strings keep their plain repr.
        _dispatch = {k: v for k, v in getattr(pprint.PrettyPrinter, "_dispatch", {}).items()
                     if k not in (str.__repr__, bytes.__repr__, bytearray.__repr__)}

    return Printer(width=79, sort_dicts=False)


def builtin_text(obj):
    """The REPL's view of a built-in value: its repr, laid out by pprint when a container's
    repr is longer than 80 characters."""
    text = repr(obj)
    if len(text) > 80 and len(text) <= PPRINT_MAX and isinstance(obj, (dict, list, tuple)):
        try:
            text = _printer().pformat(obj)
        except Exception:  # noqa: BLE001 - an odd element keeps the flat repr
            pass
    return cut_text(text)


def _is_json_value(obj, depth=0):
    """True when obj is plain JSON data that a JSON parser gives back unchanged: string keys,
    finite floats, integers within 64 bits."""
    if depth > 100:
        return False
    if obj is None or isinstance(obj, (bool, str)):
        return True
    if isinstance(obj, int):
        return -(2 ** 63) <= obj < 2 ** 64
    if isinstance(obj, float):
        return obj == obj and obj not in (float("inf"), float("-inf"))
    if isinstance(obj, (list, tuple)):
        return all(_is_json_value(v, depth + 1) for v in obj)
    if isinstance(obj, dict):
        return all(isinstance(k, str) and _is_json_value(v, depth + 1) for k, v in obj.items())
    return False


def metadata(obj):
    """``{"json": obj}`` for a built-in value that is JSON data, for structuredContent."""
    if type(obj) not in (dict, list, tuple, str, int, float, bool):
        return None
    try:
        if not _is_json_value(obj) or len(_dumps_default(obj)) > JSON_COPY_MAX:
            return None
    except (TypeError, ValueError, RecursionError):
        return None
    return {"json": obj}


def _json_ok(obj):
    try:
        _dumps_strict(obj)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _type_is(obj, module_prefix, *names):
    cls = type(obj)
    for klass in getattr(cls, "__mro__", (cls,)):
        module = getattr(klass, "__module__", "") or ""
        if module.split(".")[0] == module_prefix and klass.__name__ in names:
            return True
    return False


def figure_png(fig):
    import io

    width, height = fig.get_size_inches()
    dpi = 100.0
    side = max(width, height) * dpi
    if side > IMAGE_MAX_SIDE:
        dpi = dpi * IMAGE_MAX_SIDE / side
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def pil_png(img):
    import io

    if max(img.size) > IMAGE_MAX_SIDE:
        img = img.copy()
        img.thumbnail((IMAGE_MAX_SIDE, IMAGE_MAX_SIDE))
    if img.mode not in ("RGB", "RGBA", "L", "LA", "P", "1"):
        img = img.convert("RGBA")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _cell(value):
    text = str(value).replace("\n", " ").replace("|", "\\|")
    return text if len(text) <= 50 else text[:49] + "…"


def frame_markdown(obj):
    """A pandas DataFrame or Series as a pipe table, without tabulate."""
    frame = obj.to_frame() if _type_is(obj, "pandas", "Series") else obj
    rows, cols = frame.shape
    columns = list(frame.columns)[:20]
    header = [""] + [_cell(c) for c in columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    if rows > 50:
        picks = list(range(25)) + [None] + list(range(rows - 5, rows))
    else:
        picks = list(range(rows))
    for i in picks:
        if i is None:
            lines.append("| … |" + " … |" * len(columns))
            continue
        row = frame.iloc[i]
        values = [_cell(frame.index[i])] + [_cell(row.iloc[j]) for j in range(len(columns))]
        lines.append("| " + " | ".join(values) + " |")
    if rows > 50 or len(frame.columns) > 20 or _type_is(obj, "pandas", "DataFrame"):
        lines.append("")
        lines.append("[%d rows x %d columns]" % (rows, len(frame.columns)))
    return "\n".join(lines)


def bundle(obj):
    """The {mime: data} bundle of obj; always carries text/plain."""
    data = {}
    # Figures and PIL images first: they need our size limits (2048 px), not their own repr.
    if _type_is(obj, "matplotlib", "Figure"):
        try:
            obj._execkit_shown = True
        except AttributeError:
            pass
        return {"image/png": _b64(figure_png(obj)), "text/plain": safe_repr(obj)}
    if _type_is(obj, "PIL", "Image"):
        return {"image/png": _b64(pil_png(obj)), "text/plain": safe_repr(obj)}
    method = getattr(type(obj), "_repr_mimebundle_", None)
    if method is not None:
        try:
            got = obj._repr_mimebundle_()
            if isinstance(got, tuple):
                got = got[0]
            if isinstance(got, dict):
                data.update({k: _b64(v) for k, v in got.items() if isinstance(k, str)})
        except Exception:  # noqa: BLE001 - fall through to the other sources
            pass
    if not data:
        for name, mime in REPR_METHODS:
            if getattr(type(obj), name, None) is None:
                continue
            try:
                got = getattr(obj, name)()
            except Exception:  # noqa: BLE001
                continue
            if isinstance(got, tuple):
                got = got[0]
            if got is not None:
                data[mime] = _b64(got)
    if _type_is(obj, "pandas", "DataFrame", "Series"):
        try:
            data = {"text/markdown": frame_markdown(obj)}
        except Exception:  # noqa: BLE001
            pass
    if "application/json" in data and not _json_ok(data["application/json"]):
        del data["application/json"]
    if not data and isinstance(obj, BUILTIN_TYPES):
        try:
            return {"text/plain": builtin_text(obj)}
        except Exception:  # noqa: BLE001 - a subclass with a broken __repr__
            pass
    data["text/plain"] = safe_repr(obj)
    return data


def describe(obj):
    """(bundle, metadata) of a displayed value or cell result. Metadata carries the JSON copy
    of a built-in value and ``cut: true`` when the kernel cut the value's text."""
    data = bundle(obj)
    meta = metadata(obj) or {}
    plain = data.get("text/plain")
    if isinstance(plain, str) and plain.endswith(CUT_HINT):
        meta["cut"] = True
    return data, meta or None
