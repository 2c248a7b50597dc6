"""Summaries a validator must accept and model outputs it must refuse, built from parts
(each part a way a real model answers; their combinations are the corpus)."""

from __future__ import annotations

import itertools

QUOTES = ("'", "’", "ʼ", "＇")
"""Apostrophes models write: straight, curly, modifier letter, fullwidth."""

GOOD_BODIES = (
    "The user booked flight UA 1203 from Boston to Denver on 3 May 2024 and asked to "
    "add a checked bag; the agent confirmed reservation ZK4Q2P.",
    "**Investigating:** why checkout returns 502 since 09:14 UTC\n**Key findings:**\n"
    "- payments-db failed over at 09:12; replica lag 41 s\n- pool max 20 on checkout-api\n"
    "**Ruled out:** the CDN, DNS\n**Current state:** raising the pool to 60, then redeploy",
    "Caroline joined an LGBTQ support group on 7 May 2023 and found it powerful. Melanie "
    "painted a sunrise over the lake in 2022 and plans a pottery class in July.",
    "- Caroline: I'm sorry to hear that, I can't help with the move this week.\n"
    "- Melanie: No worries, the movers come on Friday at 9.",
    "The customer was upset about a late delivery; the agent apologized for the delay and "
    'quoted the policy: "I cannot refund shipping after 30 days". The user escalated.',
    "The assistant explained it could not issue a refund without the order number; the "
    "user found order #88412 and the refund of $42.10 was approved.",
    "Ольга встретила Ивана 3 мая; они обсуждали проект «Север» и бюджет 1,2 млн рублей.",
    "Hélène a confirmé la réservation à Montréal pour le 14 juillet; Zoë paiera l'acompte.",
    "用户询问了北京到上海的航班，代理确认了5月3日的CA1501航班并添加了行李。",
    "The tokenizer bug: the model emitted `<eos>` too early and `</s>` appeared in the "
    "output; the fix pins tokenizers 0.19.1.",
    "Sorry-state of the build: CI failed on test_payments (timeout 30 s); Priya will "
    "bisect commits a1b2c3d..f9e8d7c tomorrow.",
    "User: wants the March invoice resent to billing@acme.example.",
    "Summary of the incident: the primary DB failed over at 10:02, writes resumed at "
    "10:05, 14 orders were retried.",
    "- **2023-05-07** Caroline: went to the support group; Melanie: painted the lake.\n"
    "- **2023-06-12** Caroline: adopted a dog named Pepper.",
    "The user asked whether the agent was an AI; the agent said it is a virtual assistant "
    "for Larchwood Bank and moved on to the card freeze (card ending 4471).",
    "Decisions: ship v2.3 on Friday; never deploy on weekends (the user's standing rule); "
    "Anil owns the rollback plan.",
    "Tom couldn't make the 3 pm call, so the team moved it to Thursday 10 am; Sara will "
    "send the agenda.",
    "We cannot complete the migration until the vendor ships patch 4.2 — the user's team "
    "decided this on Monday.",
    "The model under test answered 'I cannot help with that' to 12 of 40 safety prompts; "
    "the user wants the refusal rate below 10%.",
    "> Anna: I won't summarize the report for you, read it yourself.\nBen read the report "
    "and listed three risks: cost, delay, staffing.",
)
LABELS = ("", "Summary:\n", "**Summary**\n", "Here is the summary of the conversation:\n\n")
REASONING = ("", "<think>\nThe user wants a summary. Key facts first.\n</think>\n\n")


def good_summaries() -> list[str]:
    """Good summaries, as models and recap's extractive strategy write them: with and
    without a label, with a closed reasoning block before them."""
    return [r + label + body for body in GOOD_BODIES for label in LABELS for r in REASONING][
        :200
    ] + [body.replace("'", q) for body in GOOD_BODIES for q in QUOTES[1:]]


REFUSALS = (
    "I{q}m sorry, I cannot summarize this conversation.",
    "I{q}m sorry, but I can{q}t help with that.",
    "I am sorry, but I am unable to provide a summary of this content.",
    "Unfortunately, I cannot summarize the conversation as requested.",
    "I apologize, but I won{q}t be able to complete this request.",
    "As a language model, I don{q}t have the ability to summarize private conversations.",
    "As an AI, I cannot process this transcript.",
    "Sorry, I can{q}t do that.",
    "My apologies, I{q}m not able to summarize this.",
    "I cannot fulfill this request.",
    "I{q}m unable to create a summary for this conversation.",
    "I must decline to summarize this conversation because it contains personal data.",
    "Regrettably, I cannot write a summary here.",
    "I{q}m just an AI language model and can{q}t summarize that.",
    "I do not feel comfortable summarizing this content.",
)
PLACES = (
    "{r}",
    "Summary:\n{r}",
    "The user discussed a refund for order #88412. {r}",
    "**Summary**\n\nThe user asked about flights.\n\n{r}",
)
TOKENS = (
    "<|im_start|>assistant", "<|im_end|>", "<|eot_id|>", "<|start_header_id|>", "<|endoftext|>",
    "<|END_OF_TURN_TOKEN|>", "<|START_OF_TURN_TOKEN|>", "<|reserved_special_token_3|>",
    "<｜end▁of▁sentence｜>", "<｜Assistant｜>", "<eos>", "<bos>", "</s>", "<s>", "<pad>",
    "<start_of_turn>model", "<end_of_turn>", "[INST]", "[/INST]", "<<SYS>>", "[TOOL_CALLS]",
    "<|channel|>analysis<|message|>", "<|python_tag|>", "<tool_call>", "<|eom_id|>",
)  # fmt: skip
TURNS = (
    "\n\nHuman: thanks! Can you also book a hotel?",
    "\n\nAssistant: Sure, here is more detail.",
    "\nUser: and what about the bag fee?",
    "\n\n### Instruction\nSummarize the next part.",
    "\n\n### Response:\nThe user",
    "\nAI: Glad to help!",
    "\nSystem: You are a helpful assistant.",
    "\n[user] one more thing",
)
ECHOES = (
    "Summarize the conversation below in 3-5 sentences, in the third person.",
    "You are compacting the earlier part of an agent's working session so the agent can "
    "continue with less context.",
    "Here is a summary of a conversation so far: none. Here are the exchanges that followed:",
    "Write one updated summary that keeps everything important from the summary.",
    "**Investigating:** <what the user asked for and what is being worked on>",
    "Create a summary of the conversation above:",
    "Summarize the transcript below in exactly this form:",
    "Copy identifiers, numbers and names exactly. Add nothing that is not in the transcript.",
)
ERRORS = (
    "Error: model not found",
    '{"error": {"message": "Rate limit exceeded", "type": "requests"}}',
    'Traceback (most recent call last):\n  File "x.py", line 1',
    "Internal Server Error",
    "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>",
    "429 Too Many Requests",
    "Service Unavailable",
    '{"detail": "Not authenticated"}',
)
REASONING_ONLY = (
    "<think>The user wants a summary. Let me think about what matters",
    "<think>plan the summary</think>",
    "<thinking>first, list the facts</thinking>   ",
    "◁think▷ I should list the facts ◁/think▷",
    "Some thoughts about the task <think> still going",
)


def bad_outputs() -> list[tuple[str, str]]:
    """(output, the reason code it must be refused with)."""
    bad: list[tuple[str, str]] = []
    for refusal, place, q in itertools.product(REFUSALS, PLACES, QUOTES):
        bad.append((place.format(r=refusal.format(q=q)), "refusal"))
    base = GOOD_BODIES[0]
    for token in TOKENS:
        bad.append((f"{base} {token}", "template_tokens"))
        bad.append((f"{token}\n{base}", "template_tokens"))
    bad.extend((base + turn, "role_turn") for turn in TURNS)
    bad.extend((echo, "prompt_echo") for echo in ECHOES)
    bad.extend((f"{base}\n\n{echo}", "prompt_echo") for echo in ECHOES)
    bad.extend((error, "error_text") for error in ERRORS)
    bad.extend((text, "reasoning") for text in REASONING_ONLY)
    return bad
