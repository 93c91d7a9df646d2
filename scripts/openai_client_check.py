"""A tool-call round trip against `rein serve` with the official `openai` client.

Usage: python scripts/openai_client_check.py BASE_URL
Exits non-zero with a message when anything does not hold.
"""

import json
import sys

from openai import OpenAI

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def main(base_url: str) -> None:
    client = OpenAI(base_url=base_url, api_key="not-needed", max_retries=0, timeout=120)
    models = client.models.list()
    model = models.data[0].id
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]

    call_request = dict(
        model=model,
        messages=messages,
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        temperature=0,
        max_tokens=200,
    )
    first = client.chat.completions.create(**call_request)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    calls = choice.message.tool_calls
    assert calls and len(calls) == 1, choice.message
    call = calls[0]
    assert call.function.name == "get_weather", call
    arguments = json.loads(call.function.arguments)
    assert isinstance(arguments.get("city"), str), arguments

    # The same request streamed: the client assembles the same call.
    streamed_name, streamed_arguments, finish = "", "", None
    stream = client.chat.completions.create(**call_request, stream=True)
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        for tool_call in delta.tool_calls or []:
            assert tool_call.index == 0, tool_call
            streamed_name += tool_call.function.name or ""
            streamed_arguments += tool_call.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls", finish
    assert streamed_name == "get_weather", streamed_name
    assert json.loads(streamed_arguments) == arguments, (streamed_arguments, arguments)

    # The tool's result goes back; the model answers in text.
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append(
        {
            "role": "tool",
            "tool_call_id": call.id,
            "content": json.dumps({"temperature_c": 21, "sky": "sunny"}),
        }
    )
    second = client.chat.completions.create(
        model=model,
        messages=messages,
        tools=TOOLS,
        tool_choice="none",
        temperature=0,
        max_tokens=60,
    )
    answer = second.choices[0].message
    assert answer.content and not answer.tool_calls, answer
    assert second.usage.prompt_tokens > 0 and second.usage.completion_tokens > 0, second.usage
    print(json.dumps({"call": {"name": call.function.name, "arguments": arguments},
                      "answer": answer.content}))


if __name__ == "__main__":
    main(sys.argv[1])
