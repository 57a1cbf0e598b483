"""Leaves a chat completion early with the official openai Python SDK, as a user would.

Usage: python openai-python-leave.py BASE_URL API_KEY STREAM_PROMPT PLAIN_PROMPT
Streamed: reads the first chunk and closes the stream (stream.close()). Not streamed: gives up
after a 3 s timeout. Prints one JSON object: the streamed session's and task's ids, and when each left.
"""
import json
import sys
import time

import openai
from openai import OpenAI

base_url, api_key, stream_prompt, plain_prompt = sys.argv[1:5]
client = OpenAI(base_url=f"{base_url}/v1", api_key=api_key, max_retries=0)

stream = client.chat.completions.create(
    model="service-browser-1",
    messages=[{"role": "user", "content": stream_prompt}],
    stream=True,
)
first = next(iter(stream))
service = first.model_dump()["service"]
stream.close()
stream_left = time.time()

timed_out = False
try:
    client.with_options(timeout=3.0).chat.completions.create(
        model="service-browser-1",
        messages=[{"role": "user", "content": plain_prompt}],
    )
except openai.APITimeoutError:
    timed_out = True
plain_left = time.time()

print(json.dumps({"streamSessionId": service["sessionId"], "streamTaskId": service["taskId"], "streamLeftAt": stream_left, "plainTimedOut": timed_out, "plainLeftAt": plain_left}))
