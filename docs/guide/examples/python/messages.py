# Reading and checking messages: one strict reader in every language.
from parlance import FormatError, format

# The kind is recognised from the fields; the canonical form is written back.
print(format.validate('{"role": "user", "content": "Hi"}'))
print(format.canonical({"role": "user", "content": "Hi"}))

# The older shapes of the seeds are read into today's.
old = {
    "role": "assistant",
    "content": [{"type": "tool_call", "id": "c1", "name": "get_order", "args": {"order_id": "A-1"}}],
}
print(format.canonical(old, "message")["content"][0])

# A problem is named by its JSON path.
try:
    format.validate({"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "foo"}]})
except FormatError as e:
    print(e)
