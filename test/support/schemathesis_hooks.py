"""Hooks of the schemathesis run in test/e2e/schemathesis.test.ts (SCHEMATHESIS_HOOKS=schemathesis_hooks).

They give schemathesis what a JSON Schema cannot say, and change no check:
- the media types it has no serializer of: an SDP offer (text) and a .tar.gz part;
- a real .tar.gz archive as the file of the profile uploads that the document marks valid
  (random bytes are never a gzip archive);
- for valid requests, values JSON Schema cannot make valid (an `at` time in the future, a
  cron expression, an interval of at most a year, a time zone, an RE2 expression);
- room under the per-user limits of environments and profiles (20 each, the contract's
  figures): before a create, the oldest ones are deleted, so a valid create meets the limit
  only if the service counts wrong.
"""

import copy
import io
import os
import tarfile

import requests
import schemathesis


def _archive() -> bytes:
    """A .tar.gz with one small file: a browser profile directory as the upload routes take it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = b'{"profile": {"name": "schemathesis"}}'
        info = tarfile.TarInfo("Default/Preferences")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


ARCHIVE = _archive()
ARCHIVE_UPLOADS = {("POST", "/environments/{id}/upload"), ("POST", "/profiles/{id}/upload")}
# Path of the list, and how many of them may be kept before a create: under the limit of 20.
LIMITED_CREATES = {("POST", "/environments"): ("/environments", "environments", 15), ("POST", "/profiles"): ("/profiles", "profiles", 15)}


def _as_bytes(value) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


@schemathesis.serializer("application/sdp")
def sdp_serializer(ctx, value):
    return _as_bytes(value)


@schemathesis.serializer("application/gzip")
def gzip_serializer(ctx, value):
    return _as_bytes(value)


def _positive_body(case) -> bool:
    """Whether the case means its body to be valid (a case may be negative in another part only)."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return False
    body = next((component for location, component in meta.components.items() if getattr(location, "name", "") == "BODY"), None)
    return body is None or body.mode.is_positive


@schemathesis.hook
def map_case(context, case):
    key = (case.method.upper(), case.operation.path)
    if not _positive_body(case) or not isinstance(case.body, dict):
        return case
    # A new body: the generated one may be shared with other (negative) cases.
    body = copy.deepcopy(case.body)
    if key in ARCHIVE_UPLOADS and "file" in body:
        body["file"] = ARCHIVE
    realistic(key, body)
    if body != case.body:
        # Set as generated: through the case's own setter it would count as changed by the caller.
        object.__setattr__(case, "body", body)
    return case


@schemathesis.hook
def before_call(context, case, kwargs):
    key = (case.method.upper(), case.operation.path)
    if key not in LIMITED_CREATES:
        return
    path, field, keep = LIMITED_CREATES[key]
    # The run's own base address and key (the test sets them; the -H header is added after this hook).
    base = os.environ["SCHEMATHESIS_BASE_URL"].rstrip("/")
    auth = {"Authorization": f"Bearer {os.environ['SCHEMATHESIS_API_KEY']}"}
    listed = requests.get(f"{base}{path}", headers=auth, timeout=10)
    if listed.status_code != 200:
        return
    items = listed.json().get(field, [])
    if len(items) <= keep:
        return
    items.sort(key=lambda item: item.get("createdAt") or "")
    for item in items[: len(items) - keep]:
        requests.delete(f"{base}{path}/{item['_id']}", headers=auth, timeout=10)

# Values of valid requests that a JSON Schema cannot make valid: an `at` time in the future,
# a cron expression, an interval within a year, a time zone, an RE2 expression, a dollar
# budget the task's first model call fits in.
CRON_OPERATIONS = {("POST", "/cron-jobs"), ("PUT", "/cron-jobs/{id}")}
POLICY_OPERATIONS = {("POST", "/policies"), ("PUT", "/policies/{id}")}


def _future() -> str:
    import datetime

    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


CHAT_COMPLETIONS = ("POST", "/v1/chat/completions")


def realistic(key, body):
    # A chat completion's task fails (422) when its model calls would pass metadata.max_cost:
    # a valid request gets a budget its first call fits in (a dollar, as number or text).
    if key == CHAT_COMPLETIONS and isinstance(body.get("metadata"), dict) and "max_cost" in body["metadata"]:
        body["metadata"]["max_cost"] = "1" if isinstance(body["metadata"]["max_cost"], str) else 1
    if key in CRON_OPERATIONS:
        if isinstance(body.get("scheduleAt"), str):
            body["scheduleAt"] = _future()
        if isinstance(body.get("scheduleInterval"), str):
            body["scheduleInterval"] = "15m"
        if isinstance(body.get("scheduleCron"), str):
            body["scheduleCron"] = "*/5 * * * *"
        if isinstance(body.get("timezone"), str):
            body["timezone"] = "Europe/Paris"
    if key in POLICY_OPERATIONS:
        for rule in body.get("rules") or []:
            if isinstance(rule, dict):
                for item in rule.get("sensitiveData") or []:
                    if isinstance(item, dict) and isinstance(item.get("pattern"), str):
                        item["pattern"] = "order-[0-9]{6}"
