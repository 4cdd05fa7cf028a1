"""The official `openai` Python package (from PyPI) talking to a Heddle
agent through /v1, as any OpenAI client would. It prints what it saw as
JSON; server/tests/server/openai_client.rs checks it.

Environment: HEDDLE_BASE (the server's /v1 URL), HEDDLE_KEY (an API key),
HEDDLE_MODEL (a published chat graph's id), HEDDLE_MODEL_NAME (its name),
HEDDLE_NOT_CHAT (a published graph with no `messages` channel).
"""

import json
import os

import openai
from openai import OpenAI

base = os.environ["HEDDLE_BASE"]
client = OpenAI(api_key=os.environ["HEDDLE_KEY"], base_url=base, max_retries=0)
model = os.environ["HEDDLE_MODEL"]
seen = {"version": openai.__version__}

seen["models"] = [m.id for m in client.models.list().data]

reply = client.chat.completions.create(
    model=model,
    messages=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What can you do?"},
    ],
)
seen["plain"] = {
    "content": reply.choices[0].message.content,
    "role": reply.choices[0].message.role,
    "finish_reason": reply.choices[0].finish_reason,
    "id": reply.id,
    "model": reply.model,
    "usage": reply.usage.model_dump() if reply.usage else None,
}

by_name = client.chat.completions.create(
    model=os.environ["HEDDLE_MODEL_NAME"],
    messages=[{"role": "user", "content": "Hello"}],
)
seen["by_name"] = by_name.choices[0].message.content

chunks = []
finish = None
for chunk in client.chat.completions.create(
    model=model,
    messages=[{"role": "user", "content": "Tell me about refunds"}],
    stream=True,
):
    if chunk.choices:
        delta = chunk.choices[0].delta
        if delta.content:
            chunks.append(delta.content)
        if chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
seen["streamed"] = {"chunks": chunks, "finish_reason": finish}

# Two turns on one thread, named by `user`: the second sends the whole
# history as clients do; the thread remembers.
history = [{"role": "user", "content": "Hi, my name is Ada"}]
first = client.chat.completions.create(model=model, messages=history, user="ada-42")
history.append({"role": "assistant", "content": first.choices[0].message.content})
history.append({"role": "user", "content": "What is my name?"})
second = client.chat.completions.create(model=model, messages=history, user="ada-42")
# A raw response shows the thread it went on in.
raw = client.chat.completions.with_raw_response.create(
    model=model, messages=[{"role": "user", "content": "What is my name?"}], user="ada-42"
)
seen["turns"] = [
    first.choices[0].message.content,
    second.choices[0].message.content,
    raw.parse().choices[0].message.content,
]
seen["thread_header"] = raw.headers.get("x-heddle-thread")

try:
    OpenAI(api_key="heddle_forged", base_url=base, max_retries=0).chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hi"}]
    )
    seen["forged"] = "accepted"
except openai.AuthenticationError as error:
    seen["forged"] = {"status": error.status_code, "message": error.message}

for name, wrong in [("not_chat", os.environ["HEDDLE_NOT_CHAT"]), ("unknown", "no-such-agent")]:
    try:
        client.chat.completions.create(model=wrong, messages=[{"role": "user", "content": "hi"}])
        seen[name] = "accepted"
    except openai.APIStatusError as error:
        seen[name] = {"status": error.status_code, "message": error.message}

# Tools a client offers are refused, not silently ignored.
try:
    client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "What is the weather?"}],
        tools=[{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}],
    )
    seen["tools"] = "accepted"
except openai.APIStatusError as error:
    seen["tools"] = {"status": error.status_code, "message": error.message}

print(json.dumps(seen))
