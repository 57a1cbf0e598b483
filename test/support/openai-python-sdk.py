"""Calls the service with the official openai Python SDK, unchanged, as a user would.

Usage: python openai-python-sdk.py BASE_URL API_KEY PROMPT STREAM_PROMPT
Prints one JSON object: the non-streaming completion and the streamed chunks.
"""
import json
import sys

from openai import OpenAI

base_url, api_key, prompt, stream_prompt = sys.argv[1:5]
# No retries: a retried request would run a second task.
client = OpenAI(base_url=f"{base_url}/v1", api_key=api_key, max_retries=0)

models = [m.id for m in client.models.list()]

completion = client.chat.completions.create(
    model="service-browser-1",
    messages=[{"role": "system", "content": "Answer in one sentence."}, {"role": "user", "content": prompt}],
    max_tokens=300,
)

stream = client.chat.completions.create(
    model="service-browser-1",
    messages=[{"role": "user", "content": stream_prompt}],
    stream=True,
    stream_options={"include_usage": True},
)
chunks = [chunk.model_dump() for chunk in stream]

wrong_model = None
try:
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hello"}])
except Exception as err:  # the SDK's own error class, with the parsed body
    wrong_model = {"class": type(err).__name__, "status": getattr(err, "status_code", None), "body": getattr(err, "body", None)}

print(json.dumps({"models": models, "completion": completion.model_dump(), "chunks": chunks, "wrongModel": wrong_model}))
