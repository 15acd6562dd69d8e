#!/usr/bin/env node
// A compactor in Node for compaction-harness's cmd: protocol (no npm packages).
//
//   compaction-harness run --summarizer 'cmd:node examples/node/summarize.js'
//
// The harness starts this once and writes one request per line to stdin:
//   {"schema": "compaction-harness/request", "version": 1, "protocol": "messages" | "rich",
//    "budget": <tokens>, "messages": [<chat messages>], "tags": [<facts>] (rich only)}
// and reads one answer per line from stdout, in order: {"messages": [...]} or {"error": "..."}.
// stdout carries answers only; logs go to stderr.
//
// The strategy is the one many agents ship: keep the newest messages that fit in the budget,
// note how many were dropped. It never keeps a tool result without its call (one whose call was
// cut is dropped too), but it keeps nothing of what the dropped messages said, so the harness
// will find obligations it loses.

"use strict";

const readline = require("node:readline");

const VERSION = 1;
const SCHEMA = "compaction-harness/request";
const PER_MESSAGE = 4; // role and framing, as chat APIs count them

// Roughly what a tokenizer does: each run of letters/digits is a token, and so is each punctuation mark.
function countTokens(text) {
  const matches = String(text || "").match(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu);
  return matches ? matches.length : 0;
}

function cost(message) {
  let total = PER_MESSAGE + countTokens(message.content);
  for (const call of message.tool_calls || []) {
    const fn = call.function || {};
    total += countTokens(fn.name) + countTokens(fn.arguments);
  }
  return total;
}

function summaryMessage(dropped) {
  return { role: "system", content: `Summary: ${dropped} earlier messages were dropped.` };
}

function compact(messages, budget) {
  // Reserve room for the summary line first (as if every message were dropped: the widest count).
  let room = budget - cost(summaryMessage(messages.length));
  let start = messages.length;
  while (start > 0 && cost(messages[start - 1]) <= room) {
    start -= 1;
    room -= cost(messages[start]);
  }
  // A tool result whose call is not kept (cut just now, or in an earlier compaction) is an orphan
  // that chat APIs reject: drop it. Calls come before their results, so one pass finds them.
  const calls = new Set();
  const kept = [];
  for (const message of messages.slice(start)) {
    for (const call of message.tool_calls || []) calls.add(call.id);
    if (message.role !== "tool" || calls.has(message.tool_call_id)) kept.push(message);
  }
  return [summaryMessage(messages.length - kept.length), ...kept];
}

function checkRequest(request) {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    return "the request is not a JSON object";
  }
  if (request.schema !== SCHEMA) return `schema: expected "${SCHEMA}", got ${JSON.stringify(request.schema)}`;
  if (request.version !== VERSION) {
    return `version: this compactor speaks version ${VERSION}, got ${JSON.stringify(request.version)}`;
  }
  if (!Number.isInteger(request.budget) || request.budget < 1) {
    return `budget: expected a positive integer, got ${JSON.stringify(request.budget)}`;
  }
  if (!Array.isArray(request.messages)) return "messages: expected a list of chat messages";
  const bad = request.messages.findIndex((m) => m === null || typeof m !== "object" || typeof m.role !== "string");
  if (bad >= 0) return `messages[${bad}]: expected a chat message with a role`;
  return null;
}

function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    return { error: `the request line is not JSON: ${err.message}` };
  }
  const problem = checkRequest(request);
  if (problem) return { error: problem };
  try {
    return { messages: compact(request.messages, request.budget) };
  } catch (err) {
    return { error: `compaction failed: ${err && err.stack ? err.stack : err}` };
  }
}

// One line per answer: JSON.stringify escapes newlines; escape U+2028/U+2029 too, which some
// line readers treat as line ends.
function writeLine(value) {
  const text = JSON.stringify(value).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  process.stdout.write(text + "\n");
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let served = 0;
input.on("line", (line) => {
  if (!line.trim()) return; // not a request: answering it would put later answers out of step
  served += 1;
  writeLine(answer(line));
});
input.on("close", () => {
  process.stderr.write(`summarize.js: stdin closed after ${served} requests\n`);
});
