"""JSON for the kernel's frames from the C accelerator ``_json`` alone.

``import json`` imports ``re`` and compiles its patterns: a few milliseconds of every kernel
start, for a first cell that needs none of it. This builds ``dumps``/``loads`` from the same C
functions ``json`` itself uses, checks them once against known answers, and falls back to
``json`` when the accelerator is missing or behaves differently (another interpreter or
version).
"""

def _not_serializable(obj):
    raise TypeError("Object of type %s is not JSON serializable" % type(obj).__name__)


def _constant(name):
    raise ValueError("JSON constant %s is not accepted" % name)


class _ScanContext:
    """The attributes ``_json.make_scanner`` reads (those of a default ``json.JSONDecoder``)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)
    memo = None


def _c_codec():
    import _json

    def encoder(ensure_ascii, separators, allow_nan):
        encode = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
        make = _json.make_encoder
        key_sep, item_sep = separators[1], separators[0]

        def dumps(obj):
            run = make({}, _not_serializable, encode, None, key_sep, item_sep, False, False,
                       allow_nan)
            return "".join(run(obj, 0))

        return dumps

    scan = _json.make_scanner(_ScanContext())

    def loads(data):
        text = data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data
        try:
            value, _end = scan(text.strip(), 0)
        except StopIteration as e:
            raise ValueError("not JSON at %s" % e.value) from None
        return value

    return encoder, loads


def _json_codec():
    import json

    def encoder(ensure_ascii, separators, allow_nan):
        def dumps(obj):
            return json.dumps(obj, ensure_ascii=ensure_ascii, separators=separators,
                              allow_nan=allow_nan)

        return dumps

    return encoder, json.loads


def _checked():
    try:
        encoder, loads = _c_codec()
        sample = {"a": [1, 2.5, None, True, "é\n"], "b": {}}
        compact = encoder(False, (",", ":"), False)
        if compact(sample) != '{"a":[1,2.5,null,true,"é\\n"],"b":{}}':
            raise ValueError("unexpected encoding")
        if loads(b'{"a":[1,2.5,null,true,"\\u00e9\\n"],"b":{}}\n') != sample:
            raise ValueError("unexpected decoding")
        return encoder, loads
    except Exception:  # noqa: BLE001 - any surprise means: use json itself
        return _json_codec()


encoder, loads = _checked()
