"""Node lock annotations (docs/vgpu.md#node-locks, docs/hami.md#hami-node-annotations): who holds a node's allocation
lock, and whether Volcano would break it.

With `deviceshare.NodeLockEnable`, Volcano's `nodelock.LockNode` (`pkg/scheduler/plugins/util/nodelock/`)
sets the annotation `<lockName>` = `time.Now().Format(time.RFC3339)`. On the next allocation it parses the
value with `time.Parse(time.RFC3339, …)`: older than 5 minutes → broken and retaken; younger → `node X has
been locked within 5 minutes`; **unparseable → an error every time**, so the node stays locked until
someone deletes the annotation. HAMi writes `<RFC3339>,<namespace>,<pod>`, which Volcano cannot parse.

Lock names: `hamivgpu` (vGPU), `gpu` (gpushare memory mode), `hami.io/mutex.lock` (Ascend HAMi from
Volcano v1.16.0-alpha.1, and HAMi itself). Volcano v1.14.0–v1.15.1 locked Ascend HAMi nodes under the
bare `commonWord` instead (`LockNode(ads.NodeName, ads.Type)`), e.g. `Ascend910B3`: pass those names in
`extra_names`.

The core never reads the clock: callers pass `now`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from vgpuctl.core import spec
from vgpuctl.core.codecs._common import CodecProblem, Problems, as_aware, not_a_string, parse_rfc3339, quote

VGN011 = "VGN011"
LOCK_STALE_AFTER: Final = timedelta(minutes=5)
LOCK_NAMES: Final = (spec.LOCK_VGPU, spec.LOCK_GPUSHARE, spec.LOCK_ASCEND_HAMI)


@dataclass(frozen=True, slots=True)
class NodeLock:
    name: str
    time: datetime | None  # aware; None when unreadable
    stale: bool  # Volcano would break and retake it now (older than 5 minutes and parseable by Volcano)
    raw: str = ""
    holder: str | None = None  # "namespace/pod" from HAMi's `<time>,<ns>,<pod>` form
    problems: Problems = field(default=())

    @property
    def blocking(self) -> bool:
        """Volcano's next allocation on this node would fail because of this lock."""
        return not self.stale


def decode_node_lock(name: str, value: object, *, now: datetime) -> NodeLock:
    """Decode one lock annotation; never raises."""
    if not isinstance(value, str):
        return NodeLock(name, None, False, "", None, (not_a_string(VGN011, f"lock {quote(name)}", value),))
    moment = parse_rfc3339(value)
    if moment is not None:
        return NodeLock(name, moment, as_aware(now) - moment > LOCK_STALE_AFTER, value)

    holder: str | None = None
    stamp, _, rest = value.partition(",")
    hami_time = parse_rfc3339(stamp) if rest else None
    if hami_time is not None:
        namespace, _, pod = rest.partition(",")
        holder = f"{namespace}/{pod}" if pod else namespace or None
        message = (
            f"lock {quote(name)} = {quote(value)} is HAMi's '<time>,<namespace>,<pod>' form; Volcano parses only "
            "a bare RFC3339 time, so its allocations on this node fail until the annotation is deleted"
        )
    else:
        message = (
            f"lock {quote(name)} = {quote(value)} is not an RFC3339 time; Volcano cannot parse it, so its "
            "allocations on this node fail until the annotation is deleted"
        )
    return NodeLock(name, hami_time, False, value, holder, (CodecProblem(VGN011, message),))


def find_node_locks(annotations: object, *, now: datetime, extra_names: Iterable[str] = ()) -> tuple[NodeLock, ...]:
    """Every lock annotation present on a node, in `LOCK_NAMES` order then `extra_names`; never raises."""
    if not isinstance(annotations, Mapping):
        return ()
    names = list(dict.fromkeys([*LOCK_NAMES, *extra_names]))
    return tuple(decode_node_lock(n, annotations[n], now=now) for n in names if n in annotations)


def encode_node_lock(moment: datetime) -> str:
    """Volcano's lock value: `time.Now().Format(time.RFC3339)` (seconds, `Z` or `±hh:mm`)."""
    moment = as_aware(moment).replace(microsecond=0)
    text = moment.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
