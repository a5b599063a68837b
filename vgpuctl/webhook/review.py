"""AdmissionReview v1 in and out: types, strict request parsing, and the decisions both endpoints answer.

Kept free of Flask so the contract (what a body must look like, what we answer) is testable on plain
data. The typing follows kopf's `reviews.py`: Kubernetes JSON as `TypedDict`s with `Literal`s.

Two decisions are made from one `podrules.review` verdict:
- mutating: always allowed; the add-only JSON Patch with the defaults; warnings for warning findings
  and for each default it applied (an `info` finding of a rule that is otherwise an error, docs/contracts.md#findings).
- validating: denied (`status.code` 403, 400 when the object itself is unreadable) on any error
  finding, the message listing every error as `[CODE] message. Fix: hint`; warnings otherwise.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple, TypedDict

import orjson

from vgpuctl.core.catalogue import CATALOGUE
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.podrules import Review

API_VERSION: Final = "admission.k8s.io/v1"
KIND: Final = "AdmissionReview"
MAX_WARNING_CHARS = 256  # the API server truncates longer warnings
MAX_WARNINGS = 20  # warnings travel in response headers, which are limited as a whole
MAX_MESSAGE_CHARS = 4096

Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
OPERATIONS: tuple[Operation, ...] = ("CREATE", "UPDATE", "DELETE", "CONNECT")
Endpoint = Literal["mutate", "validate"]


class Status(TypedDict, total=False):
    code: int
    message: str
    reason: str


class ResponsePayload(TypedDict, total=False):
    uid: str
    allowed: bool
    status: Status
    warnings: list[str]
    patchType: Literal["JSONPatch"]
    patch: str


class ResponseReview(TypedDict):
    apiVersion: Literal["admission.k8s.io/v1"]
    kind: Literal["AdmissionReview"]
    response: ResponsePayload


class InvalidReviewError(ValueError):
    """The body is not an AdmissionReview v1 request we can answer (HTTP 400)."""


class AdmissionRequest(NamedTuple):
    """The parts of a request the webhook uses, checked for shape. (A named tuple: made once per request,
    at a third of a frozen dataclass's cost.)"""

    uid: str
    group: str
    version: str
    kind: str
    operation: Operation
    namespace: str
    name: str
    sub_resource: str
    dry_run: bool
    obj: Mapping[str, Any] | None
    old_obj: Mapping[str, Any] | None

    @property
    def subject(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def is_pod(self) -> bool:
        return self.group == "" and self.kind == "Pod"


def _field(payload: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str,
           required: bool = False) -> Any:
    value = payload.get(key)
    if type(value) is kind:  # the usual case, exactly the JSON type asked for: one comparison
        return value
    if value is None:
        if required:
            raise InvalidReviewError(f"{where}.{key} is required")
        return None
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InvalidReviewError(f"{where}.{key} must be {_json_type(names)}, got {_json_type(type(value).__name__)}")
    return value


def _json_type(python: str) -> str:
    return {"dict": "an object", "str": "a string", "bool": "a boolean", "list": "a list", "int": "an integer",
            "float": "a number", "NoneType": "null"}.get(python, python)


def parse_review(body: Any) -> AdmissionRequest:
    """Check that `body` (decoded JSON) is an `admission.k8s.io/v1` AdmissionReview request."""
    parsed = _parse_well_formed(body)  # fast path for what the API server sends (benchmarks/webhook_load.py)
    return parsed if parsed is not None else _parse_checked(body)


def _parse_well_formed(body: Any) -> AdmissionRequest | None:
    """The request when every member has exactly the JSON type asked for, as the API server sends it;
    None for anything else, which `_parse_checked` then judges (with the error message). A dozen reads
    and one combined test instead of a call per member: this runs for every review."""
    if type(body) is not dict or body.get("apiVersion") != API_VERSION or body.get("kind") != KIND:
        return None
    request = body.get("request")
    if type(request) is not dict:
        return None
    get = request.get
    uid, gvk, operation, obj, old = get("uid"), get("kind"), get("operation"), get("object"), get("oldObject")
    namespace, name, sub_resource, dry_run = get("namespace", ""), get("name", ""), get("subResource", ""), \
        get("dryRun", False)
    if type(gvk) is not dict:
        return None
    group, version, kind = gvk.get("group", ""), gvk.get("version"), gvk.get("kind")
    if not (type(uid) is str and uid and type(group) is str and type(version) is str and type(kind) is str
            and type(operation) is str and operation in OPERATIONS
            and (type(obj) is dict or (obj is None and operation not in ("CREATE", "UPDATE")))
            and (old is None or type(old) is dict) and type(namespace) is str and type(name) is str
            and type(sub_resource) is str and type(dry_run) is bool):
        return None
    return AdmissionRequest(uid, group, version, kind, operation, namespace, name, sub_resource, dry_run,
                            _with_type_meta(obj, group, version, kind), _with_type_meta(old, group, version, kind))


def _parse_checked(body: Any) -> AdmissionRequest:
    if not isinstance(body, Mapping):
        raise InvalidReviewError("the body must be a JSON object (an AdmissionReview)")
    api_version = body.get("apiVersion")
    if api_version != API_VERSION:
        got = repr(api_version)[:100]
        raise InvalidReviewError(f"apiVersion must be {API_VERSION} (admissionReviewVersions: [v1]), got {got}")
    if body.get("kind") != KIND:
        raise InvalidReviewError(f"kind must be {KIND}, got {body.get('kind')!r}"[:300])
    request = _field(body, "request", dict, "", required=True)
    uid = _field(request, "uid", str, "request", required=True)
    if not uid:
        raise InvalidReviewError("request.uid must not be empty")
    gvk = _field(request, "kind", dict, "request", required=True)
    group = _field(gvk, "group", str, "request.kind") or ""
    version = _field(gvk, "version", str, "request.kind", required=True)
    kind = _field(gvk, "kind", str, "request.kind", required=True)
    operation = _field(request, "operation", str, "request", required=True)
    if operation not in OPERATIONS:
        raise InvalidReviewError(f"request.operation must be one of {', '.join(OPERATIONS)}, got {operation!r}"[:300])
    obj = _field(request, "object", dict, "request")
    old = _field(request, "oldObject", dict, "request")
    if operation in ("CREATE", "UPDATE") and obj is None:
        raise InvalidReviewError(f"request.object is required for {operation}")
    dry_run = _field(request, "dryRun", bool, "request")
    return AdmissionRequest(
        uid=uid,
        group=group,
        version=version,
        kind=kind,
        operation=operation,
        namespace=_field(request, "namespace", str, "request") or "",
        name=_field(request, "name", str, "request") or "",
        sub_resource=_field(request, "subResource", str, "request") or "",
        dry_run=bool(dry_run),
        obj=_with_type_meta(obj, group, version, kind),
        old_obj=_with_type_meta(old, group, version, kind),
    )


def _with_type_meta(obj: dict[str, Any] | None, group: str, version: str, kind: str) -> Mapping[str, Any] | None:
    """The API server sends apiVersion/kind in the object; a hand-written review may not. The rules route
    on them, so fill them in from `request.kind` rather than skip the object."""
    if obj is None or ("apiVersion" in obj and "kind" in obj):
        return obj
    filled = dict(obj)
    filled.setdefault("apiVersion", f"{group}/{version}" if group else version)
    filled.setdefault("kind", kind)
    return filled


def reviewed(request: AdmissionRequest) -> bool:
    """Whether the rules apply to this request at all.

    Pods are judged at CREATE only: their device resources are immutable afterwards, and the scheduler
    and device plugin write annotations (`volcano.sh/gpu-index`, …) on bound pods that the rules would
    rightly refuse from a user. Volcano Jobs and other pod-template owners are judged at CREATE and UPDATE.
    Subresources (status, binding, eviction…) and DELETE/CONNECT never are.
    """
    if request.sub_resource or request.operation not in ("CREATE", "UPDATE"):
        return False
    return not (request.is_pod and request.operation == "UPDATE")


class Decision(NamedTuple):
    allowed: bool
    warnings: tuple[str, ...] = ()
    patch: tuple[dict[str, Any], ...] = ()
    status_code: int | None = None
    message: str = ""
    codes: tuple[str, ...] = ()  # error codes for denials, all codes otherwise (for logs)


ALLOW = Decision(True)
_ERROR, _WARNING, _INFO = Severity.ERROR, Severity.WARNING, Severity.INFO  # enum member access is a call each
# Codes whose rule is an error: an `info` finding of one says a mutating default repaired it (a warning
# rule's `info`, e.g. VGH010 without plugin facts, is only informational and stays out of the warnings).
_DEFAULTED = frozenset(code for code, info in CATALOGUE.items() if info.severity is Severity.ERROR)


def _printable(text: str) -> str:
    """Warnings go into HTTP headers: no control characters, no line breaks."""
    if text.isprintable():  # the common case, checked in C
        return text
    return "".join(ch if ch.isprintable() else " " for ch in text)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def warning_text(finding: Finding) -> str:
    text = f"[{finding.code}] {finding.message}"
    if not text.isprintable():
        text = _printable(text)
    return text if len(text) <= MAX_WARNING_CHARS else _clip(text, MAX_WARNING_CHARS)


def _warnings(findings: Sequence[Finding]) -> tuple[str, ...]:
    if not findings:
        return ()
    texts: list[str] = []
    for finding in findings:
        text = warning_text(finding)
        if text not in texts:
            texts.append(text)
    if len(texts) > MAX_WARNINGS:
        rest = len(texts) - (MAX_WARNINGS - 1)
        texts = [*texts[: MAX_WARNINGS - 1], f"… and {rest} more warnings (run vgpuctl lint on the manifest)"]
    return tuple(texts)


def mutate_decision(result: Review) -> Decision:
    findings = result.findings
    if not findings:
        return Decision(True, patch=result.patch) if result.patch else ALLOW
    # warnings, and the defaults it applied: an `info` finding of a rule that is otherwise an error or warning
    shown = [f for f in findings if f.severity is _WARNING or (f.severity is _INFO and f.code in _DEFAULTED)]
    return Decision(True, _warnings(shown), result.patch, codes=_codes(findings))


def _codes(findings: Sequence[Finding]) -> tuple[str, ...]:
    if len(findings) == 1:
        return (findings[0].code,)
    return tuple(dict.fromkeys([f.code for f in findings]))


def denial_message(errors: Sequence[Finding]) -> str:
    parts: list[str] = []
    for finding in errors:
        text = f"[{finding.code}] {finding.message.rstrip('. ')}"
        if finding.hint:
            text += f". Fix: {finding.hint.rstrip('. ')}"
        text = _printable(text)
        if text not in parts:
            parts.append(text)
    return _clip("; ".join(parts), MAX_MESSAGE_CHARS)


def validate_decision(result: Review, before: Review | None = None) -> Decision:
    """Deny on error findings. With `before` (the old object of an UPDATE), only errors the update
    introduces deny: an object admitted before the webhook existed can still be scaled or edited."""
    findings = result.findings
    if not findings:
        return ALLOW
    errors: list[Finding] = []
    shown: list[Finding] = []  # warnings
    for f in findings:  # one pass: most reviews have a finding or two
        if f.severity is _ERROR:
            errors.append(f)
        elif f.severity is _WARNING:
            shown.append(f)
    if before is not None and errors:
        old = {(f.code, f.subject) for f in before.findings if f.severity is _ERROR}
        kept = [f for f in errors if (f.code, f.subject) in old]  # the old object had them: warned, not denied
        errors = [f for f in errors if (f.code, f.subject) not in old]
        shown = kept + shown
    warnings = _warnings(shown)
    if not errors:
        return Decision(True, warnings, codes=_codes(findings))
    only_unreadable = all(f.code == "VGL001" for f in errors)
    return Decision(False, warnings, status_code=400 if only_unreadable else 403, message=denial_message(errors),
                    codes=_codes(errors))


def internal_error_decision(endpoint: Endpoint, error: BaseException) -> Decision:
    """The rules raised (a bug). The validating path must not let an unchecked object through, so it
    denies, saying so; the mutating path lets the object through unchanged: the validating webhook
    still judges it."""
    name = type(error).__name__
    if endpoint == "validate":
        # 403 like every denial (docs/contracts.md#interfaces allows 400/403): a 5xx-looking code would read as the
        # webhook
        # being down, while this is a deliberate, logged refusal of one object.
        return Decision(False, status_code=403, codes=("INTERNAL",),
                        message=f"[INTERNAL] vgpuctl webhook internal error ({name}) while checking this object; "
                                "it is denied "
                                "rather than admitted unchecked. Retry, and report the webhook log line with this "
                                "request's uid if it persists.")
    return Decision(True, (f"vgpuctl webhook could not compute its defaults (internal error {name}); the object is "
                           "admitted unchanged and the validating webhook still checks it",), codes=("INTERNAL",))


def encode_patch(ops: Sequence[Mapping[str, Any]]) -> str:
    return base64.b64encode(orjson.dumps(list(ops))).decode()


def build_response(uid: str, decision: Decision, *, with_patch: bool) -> ResponseReview:
    response: ResponsePayload = {"uid": uid, "allowed": decision.allowed}
    if not decision.allowed:
        code = decision.status_code or 403
        response["status"] = {"code": code, "message": decision.message,
                              "reason": "BadRequest" if code == 400 else "Forbidden"}
    if decision.warnings:
        response["warnings"] = list(decision.warnings)
    if with_patch and decision.patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = encode_patch(decision.patch)
    return {"apiVersion": API_VERSION, "kind": KIND, "response": response}
