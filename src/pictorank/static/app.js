// pictorank game page: plain JavaScript, no framework, no network access beyond this service.
// "Guess": a random puzzle from GET /puzzles/random, answered with POST /puzzles/{id}/guess.
// "Ask": the player builds a clue from GET /hints and ranks it with POST /rank, live as it changes;
//        "Suggest a clue" fills the clue with pictorank's own for the player's word (POST /suggest).
// "Clue": pictorank picks a secret word among a game puzzle's options and gives its clue
//        (GET /clues/random; the word stays on the server until POST /clues/{id}/guess) and the
//        player guesses it; or it shows its clue for the player's own word, with its reasons (POST /suggest).
// Pictograms show their drawing (GET /hints/{id}/icon) when the vocabulary has one, else text only.
"use strict";

const $ = (id) => document.getElementById(id);

// A touch screen (no hover, or a coarse pointer) gets touch words; a keyboard gets key hints.
const TOUCH = window.matchMedia("(hover: none), (pointer: coarse)").matches;
document.documentElement.classList.toggle("touch", TOUCH);
const NARROW = window.matchMedia("(max-width: 63.99rem)");  // the ranking comes under the clue, not beside it
const KEYS_HINT = "keys 1-9 and 0 pick the first ten";

// ---------------------------------------------------------------------------------------------
// HTTP: every failure becomes an Error whose message is readable by a player.
// ---------------------------------------------------------------------------------------------

function errorMessage(status, body) {
  // The service's 4xx bodies are {"detail": [{"loc": [...], "msg": "..."}]} (or a plain string).
  const detail = body && body.detail;
  if (Array.isArray(detail) && detail.length) {
    return detail.map((d) => {
      const where = (d.loc || []).filter((part) => part !== "body").join(" > ");
      return where ? `${where}: ${d.msg}` : d.msg;
    }).join("; ");
  }
  if (typeof detail === "string") return detail;
  return `the service answered ${status}`;
}

async function api(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    throw new Error("cannot reach the pictorank service; is it running?");
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    const error = new Error(`Error ${response.status}: ${errorMessage(response.status, data)}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function setStatus(element, text, isError) {
  element.textContent = text || "";
  element.classList.toggle("error", Boolean(isError));
}

function el(tag, props, children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const child of children || []) node.append(child);
  return node;
}

// ---------------------------------------------------------------------------------------------
// Shared pieces: clue cards and the ranking bar chart.
// ---------------------------------------------------------------------------------------------

function pictogram(hint) {
  // The drawing, with the description as its text alternative; null when the vocabulary has none.
  if (!hint.icon) return null;
  return el("img", { className: "pictogram", src: hint.icon, alt: hint.description, decoding: "async" });
}

function clueCard(hint, index, actions) {
  // hint: {id, description, icon}; the drawing large, the description as its caption.
  const card = el("li", { className: index === 0 ? "card main" : "card" });
  card.dataset.hintId = String(hint.id);
  const pos = el("span", { className: "pos", textContent: `#${index + 1}` });
  if (index === 0) pos.append(el("span", { className: "badge", textContent: "main idea" }));
  card.append(pos);
  const image = pictogram(hint);
  if (image) {
    card.classList.add("has-icon");
    card.append(image);
  }
  card.append(el("span", { className: "desc", textContent: hint.description }));
  if (actions) card.append(actions);
  return card;
}

function shortName(description) {
  // A description's first synonym: "container, bowl, holder" -> "container".
  return description.split(",")[0].trim();
}

const SLIGHT_PULL = 0.1;  // a pull under this share of the strongest one is "little effect"

function pullWords(hints) {
  // Each hint's pull in words, never the ranker's raw numbers: "flower pulls it up".
  const strongest = Math.max(...hints.map((h) => Math.abs(h.pull)), 0);
  return hints.map((h) => {
    const name = shortName(h.hint);
    if (strongest === 0 || Math.abs(h.pull) < SLIGHT_PULL * strongest) return el("span", { textContent: `${name}: little effect` });
    return h.pull > 0 ? el("span", { className: "up", textContent: `${name} \u25b2 pulls it up` })
      : el("span", { className: "down", textContent: `${name} \u25bc pulls it down` });
  });
}

function renderWhy(container, explanations) {
  // One line per ranked word: the service's sentence, then which way each hint pulled it.
  container.replaceChildren(...(explanations || []).map((e) => {
    const pulls = el("span", { className: "pulls" });
    pullWords(e.hints).forEach((part, i) => pulls.append(...(i ? [" \u00b7 ", part] : [part])));
    const item = el("li", {}, [
      el("span", { className: "word", textContent: e.option }),
      el("span", { className: "summary", textContent: e.summary }),
      pulls,
    ]);
    item.dataset.word = e.option;
    return item;
  }));
}

function confidenceText(confidence, word, past) {
  // "pictorank is 83% sure it is "seal"" (null: the service has no calibration for this ranking).
  if (confidence === null || confidence === undefined) return "";
  const percent = Math.round(confidence * 100);
  return past ? `pictorank was ${percent}% sure it is "${word}".` : `pictorank is ${percent}% sure it is "${word}".`;
}

function askConfidenceText(result) {
  // Ask mode: the player typed the options and may have left the word out, so how sure pictorank
  // is of its first word counts the chance that the word is none of them.
  const top = result.ranking[0];
  if (result.confidence === null || result.confidence === undefined) return "";
  const none = result.none_of_these;
  if (none === null || none === undefined) return confidenceText(result.confidence, top, false);
  const sure = Math.round(result.confidence * (1 - none) * 100);
  const missing = Math.round(none * 100);
  const warning = none >= 0.5 ? ` Your word may well not be among your options (${missing}% chance).`
    : ` (${missing}% chance your word is none of your options.)`;
  return `pictorank is ${sure}% sure it is "${top}".${warning}`;
}

function renderChart(container, ranking, scores, marks) {
  // Plain bars, no numbers: a ranker's raw scores mean nothing to a player. Bars scale from the
  // lowest to the highest shown score, so small differences stay visible whatever the ranker.
  container.replaceChildren();
  const lo = Math.min(...scores);
  const hi = Math.max(...scores);
  ranking.forEach((word, i) => {
    const share = hi > lo ? 0.08 + 0.92 * (scores[i] - lo) / (hi - lo) : 1;
    const row = el("div", { className: "bar-row" });
    row.dataset.word = word;
    const label = el("span", { className: "word", textContent: word });
    if (marks && word === marks.answer) {
      row.classList.add("is-answer");
      label.append(el("span", { className: "tag", textContent: "(answer)" }));
    }
    if (marks && word === marks.guess) {
      row.classList.add("is-guess");
      if (word !== marks.answer) label.append(el("span", { className: "tag", textContent: "(your guess)" }));
    }
    const fill = el("div", { className: "fill" });
    fill.style.width = `${(share * 100).toFixed(1)}%`;
    const track = el("div", { className: "track" }, [fill]);
    track.setAttribute("role", "img");
    track.setAttribute("aria-label", i === 0 ? "the longest bar: pictorank's first choice"
      : `a bar ${Math.round(share * 100)} percent as long as the first`);
    row.append(el("span", { className: "rank", textContent: String(i + 1) }), label, track);
    container.append(row);
  });
}

// ---------------------------------------------------------------------------------------------
// Tabs (click, or arrow keys when a tab has focus).
// ---------------------------------------------------------------------------------------------

const tabs = [$("tab-guess"), $("tab-ask"), $("tab-give")];

function selectTab(tab) {
  for (const t of tabs) {
    const selected = t === tab;
    t.setAttribute("aria-selected", String(selected));
    t.tabIndex = selected ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !selected;
  }
  if (tab.id === "tab-ask") ensureHints();
  if (tab.id === "tab-give" && !$("give-clue").children.length) newSecret();
}

for (const tab of tabs) {
  tab.addEventListener("click", () => selectTab(tab));
  tab.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const next = tabs[(tabs.indexOf(tab) + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    selectTab(next);
    next.focus();
  });
}

// ---------------------------------------------------------------------------------------------
// Guess mode
// ---------------------------------------------------------------------------------------------

let puzzle = null;
let answered = false;

async function newPuzzle() {
  const subtask = $("subtask").value;
  setStatus($("guess-status"), "Drawing a puzzle...");
  $("verdict").hidden = true;
  $("guess-ranking").hidden = true;
  try {
    puzzle = await api("GET", "/puzzles/random" + (subtask ? `?subtask=${subtask}` : ""));
  } catch (err) {
    setStatus($("guess-status"), err.message, true);
    return;
  }
  answered = false;
  $("clue").replaceChildren(...puzzle.hints.map((h, i) => clueCard(h, i)));
  $("options-title").hidden = false;
  const buttons = puzzle.options.map((option, i) => {
    const button = el("button", { type: "button", textContent: option });
    button.dataset.option = option;
    if (i < 10) button.setAttribute("aria-keyshortcuts", String((i + 1) % 10));
    button.addEventListener("click", () => guess(option));
    return button;
  });
  $("options").replaceChildren(...buttons);
  setStatus($("guess-status"), `Puzzle ${puzzle.id}: ${puzzle.hints.length} pictograms, ${puzzle.options.length} options. ` +
    (TOUCH ? "Tap the word." : `Pick the word (${KEYS_HINT}).`));
}

async function guess(option) {
  if (!puzzle || answered) return;
  answered = true;
  const buttons = [...$("options").querySelectorAll("button")];
  buttons.forEach((b) => { b.disabled = true; });
  setStatus($("guess-status"), "Checking...");
  let result;
  try {
    result = await api("POST", `/puzzles/${encodeURIComponent(puzzle.id)}/guess`, { guess: option });
  } catch (err) {
    answered = false;
    buttons.forEach((b) => { b.disabled = false; });
    setStatus($("guess-status"), err.message, true);
    return;
  }
  setStatus($("guess-status"), "");
  for (const b of buttons) {
    if (b.dataset.option === result.answer) b.classList.add("answer");
    else if (b.dataset.option === option) b.classList.add("wrong");
  }
  const verdict = $("verdict");
  verdict.className = `verdict ${result.correct ? "right" : "wrong"}`;
  verdict.textContent = result.correct
    ? `Right! The answer is "${result.answer}".`
    : `Wrong: you picked "${option}", the answer is "${result.answer}".`;
  const position = result.answer_position === 1 ? "first" : `at position ${result.answer_position}`;
  verdict.append(el("span", { className: "help", textContent: ` pictorank ranked it ${position}.` }));
  verdict.hidden = false;
  // "top 10" only when it is a top 10: all the options when there are as few (it said "top 10" over 4)
  $("guess-ranking-title").textContent = result.ranking.length < puzzle.options.length
    ? `pictorank's top ${result.ranking.length}` : "pictorank's ranking";
  renderChart($("guess-chart"), result.ranking, result.scores, { answer: result.answer, guess: option });
  $("guess-confidence").textContent = confidenceText(result.confidence, result.ranking[0], true);
  renderWhy($("guess-why"), result.explanations);
  $("guess-ranking").hidden = false;
  keepInView(verdict, $("next-puzzle"));
}

$("new-puzzle").addEventListener("click", newPuzzle);
$("next-puzzle").addEventListener("click", newPuzzle);
$("subtask").addEventListener("change", newPuzzle);

document.addEventListener("keydown", (event) => {
  // Number keys pick an option, unless the player is typing somewhere.
  if ($("panel-guess").hidden || !puzzle || answered) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) return;
  if (!/^[0-9]$/.test(event.key)) return;
  const index = event.key === "0" ? 9 : Number(event.key) - 1;
  if (index < puzzle.options.length) {
    event.preventDefault();
    guess(puzzle.options[index]);
  }
});

// ---------------------------------------------------------------------------------------------
// Ask mode
// ---------------------------------------------------------------------------------------------

let allHints = null;     // [{id, description, icon}] from GET /hints, loaded on first use
let clue = [];           // picked hints, in clue order
let excluded = [];       // words the player ruled out ("not it"), left out of every ranking
let rankTimer = null;    // the pending live re-ranking (debounced)
let rankSeq = 0;         // number of the latest ranking asked for: older replies are stale
let lexiconSize = null;  // how many words a clue without options is guessed from (GET /health)
const MAX_RESULTS = 30;
const LIVE_DELAY_MS = 250;

async function ensureHints() {
  if (allHints) return;
  setStatus($("ask-status"), "Loading pictograms...");
  try {
    allHints = (await api("GET", "/hints")).hints;
    lexiconSize = (await api("GET", "/health")).lexicon_size ?? null;
    setStatus($("ask-status"), "");
    searchHints();
  } catch (err) {
    setStatus($("ask-status"), err.message, true);
  }
}

function searchHints() {
  const query = $("hint-search").value.trim().toLowerCase();
  const list = $("hint-results");
  if (!allHints || !query) {
    list.replaceChildren();
    return;
  }
  // Best first: a synonym equal to the query, then a word starting with it, then the rest;
  // shorter descriptions first within each group.
  const relevance = (h) => {
    const text = h.description.toLowerCase();
    if (text.split(",").some((synonym) => synonym.trim() === query)) return 0;
    return text.split(/[^a-z0-9]+/).some((word) => word.startsWith(query)) ? 1 : 2;
  };
  const matches = allHints.filter((h) => h.description.toLowerCase().includes(query))
    .map((h) => [relevance(h), h.description.length, h])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map((entry) => entry[2]);
  const items = matches.slice(0, MAX_RESULTS).map((h) => {
    const image = pictogram(h);
    const button = el("button", { type: "button", className: image ? "has-icon" : "" },
      [...(image ? [image] : []), el("span", { className: "label", textContent: h.description })]);
    button.dataset.hintId = String(h.id);
    button.addEventListener("click", () => addHint(h));
    return el("li", {}, [button]);
  });
  if (!items.length) items.push(el("li", { className: "help", textContent: `No pictogram matches "${query}".` }));
  list.replaceChildren(...items);
}

function addHint(hint) {
  clue.push(hint);
  renderClue();
  scheduleRank();
  setStatus($("ask-status"), `Added "${hint.description}" (#${clue.length}).`);
  $("hint-search").value = "";
  searchHints();
  if (TOUCH) document.activeElement.blur();  // no on-screen keyboard over the ranking
  else $("hint-search").focus();
}

function moveHint(index, delta) {
  const target = index + delta;
  if (target < 0 || target >= clue.length) return;
  [clue[index], clue[target]] = [clue[target], clue[index]];
  renderClue();
  scheduleRank();
}

function removeHint(index) {
  const [removed] = clue.splice(index, 1);
  renderClue();
  scheduleRank();
  setStatus($("ask-status"), `Removed "${removed.description}".`);
  if (!TOUCH) $("hint-search").focus();
}

function renderClue() {
  const cards = clue.map((hint, i) => {
    const up = el("button", { type: "button", className: "secondary", textContent: "\u2191", disabled: i === 0 });
    up.setAttribute("aria-label", `Move "${hint.description}" earlier`);
    up.addEventListener("click", () => moveHint(i, -1));
    const remove = el("button", { type: "button", className: "secondary remove", textContent: TOUCH ? "\u00d7" : "\u00d7 Remove" });
    remove.setAttribute("aria-label", `Remove "${hint.description}" from the clue`);
    remove.addEventListener("click", () => removeHint(i));
    return clueCard(hint, i, el("div", { className: "card-actions" }, [up, remove]));
  });
  $("ask-clue").replaceChildren(...cards);
  $("ask-clue-empty").hidden = clue.length > 0;
}

function scheduleRank() {
  // Live re-ranking: wait until the player pauses, then rank the clue as it is then.
  clearTimeout(rankTimer);
  if (!clue.length) {
    rankSeq += 1;  // a reply still on its way is for a clue that no longer exists
    $("ask-ranking").hidden = true;
    return;
  }
  rankTimer = setTimeout(rankClue, LIVE_DELAY_MS);
}

async function rankClue() {
  clearTimeout(rankTimer);
  if (!clue.length) {
    setStatus($("ask-status"), "Add at least one pictogram to the clue first.", true);
    return;
  }
  const options = $("ask-options").value.split("\n").map((o) => o.trim()).filter((o) => o);
  const ids = clue.map((h) => h.id);
  const body = { hints: ids, top_k: 10, explain: true };
  if (options.length) body.options = options;
  if (excluded.length) body.exclude = excluded.slice();
  const seq = ++rankSeq;
  setStatus($("ask-status"), "Ranking...");
  let result;
  try {
    result = await api("POST", "/rank", body);
  } catch (err) {
    if (seq !== rankSeq) return;  // stale: a newer ranking was asked for
    $("ask-ranking").hidden = true;
    setStatus($("ask-status"), err.message, true);
    return;
  }
  if (seq !== rankSeq) return;  // stale: never overwrite a newer clue's ranking
  const left = options.filter((o) => !excluded.includes(o)).length;
  const known = lexiconSize ? ` (${lexiconSize.toLocaleString("en")} words, never a pictogram's own word)` : "";
  const mode = result.mode === "open_vocabulary" ? `every word pictorank knows${known}: no options given` : `your ${left} options`;
  setStatus($("ask-status"), `Ranked ${mode}.`);
  $("ask-ranking-title").textContent = result.mode === "open_vocabulary" ? "pictorank's best guesses" : "pictorank's ranking of your options";
  $("ask-confidence").textContent = askConfidenceText(result);
  renderChart($("ask-chart"), result.ranking, result.scores, null);
  addNotIt(result.ranking[0]);
  renderWhy($("ask-why"), result.explanations);
  renderExcluded();
  $("ask-ranking").dataset.for = ids.join(",");
  $("ask-ranking").hidden = false;
}

function addNotIt(word) {
  // "Not it" beside the top answer: rule the word out and rank again without it.
  const top = $("ask-chart").querySelector(".bar-row");
  if (!top || word === undefined) return;
  const button = el("button", { type: "button", className: "secondary not-it", textContent: "Not it" });
  button.setAttribute("aria-label", `Not "${word}": rank again without it`);
  button.addEventListener("click", () => {
    if (!excluded.includes(word)) excluded.push(word);
    rankClue();
  });
  top.querySelector(".word").append(button);
}

function renderExcluded() {
  $("ask-excluded").hidden = excluded.length === 0;
  $("ask-excluded-words").textContent = excluded.length ? `Ruled out: ${excluded.join(", ")}.` : "";
}

$("hint-search").addEventListener("input", searchHints);
$("hint-search").addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  event.preventDefault();
  const first = $("hint-results").querySelector("button");
  if (first) first.click();
});
$("ask-rank").addEventListener("click", rankClue);
$("ask-options").addEventListener("input", scheduleRank);
$("ask-excluded-reset").addEventListener("click", () => {
  excluded = [];
  rankClue();
});
$("ask-suggest-form").addEventListener("submit", (event) => {
  event.preventDefault();
  suggestForAsk();
});
$("ask-clear").addEventListener("click", () => {
  clue = [];
  excluded = [];
  renderClue();
  scheduleRank();
  setStatus($("ask-status"), "Clue cleared.");
});

function asHint(pictogram) {
  // A suggested pictogram as the clue cards and /rank take it.
  return { id: pictogram.id, description: pictogram.description, icon: pictogram.icon };
}

function clueText(suggestion) {
  return suggestion.pictograms.map((p) => shortName(p.description)).join(" + ");
}

async function suggestForAsk() {
  // pictorank's clue for the player's word replaces the clue, then ranks as any clue does; the
  // player's options (other than the word) are the words the clue must not be taken for.
  const word = $("ask-word").value.trim();
  const status = $("ask-suggest-status");
  if (!word) {
    setStatus(status, "Type a word first.", true);
    $("ask-word").focus();
    return;
  }
  const avoid = $("ask-options").value.split("\n").map((o) => o.trim()).filter((o) => o && o !== word);
  setStatus(status, `Finding a clue for "${word}"...`);
  let result;
  try {
    result = await api("POST", "/suggest", { word, avoid: [...new Set(avoid)].slice(0, 100), top: 1 });
  } catch (err) {
    setStatus(status, err.message, true);
    return;
  }
  const [best] = result.suggestions;
  clue = best.pictograms.map(asHint);
  excluded = [];
  // The ranking below charts the very words the clue was judged against: the word and the words
  // it must not be taken for (the player's options, or pictorank's nearest words when none).
  $("ask-options").value = [result.word, ...result.avoid].join("\n");
  renderClue();
  const ranked = rankClue();
  const known = best.known ? " (a person's clue from the training data)" : "";
  setStatus(status, `pictorank's clue for "${result.word}": ${clueText(best)}${known}. ` +
    `Its guesser puts "${result.word}" at #${best.rank} of ${best.options} words.`);
  $("ask-suggest-status").dataset.word = result.word;
  await ranked;
  // The form is under the ranking on a narrow screen: bring the new clue and its ranking into view.
  if (NARROW.matches) $("ask-clue-title").scrollIntoView({ block: "start" });
}

// ---------------------------------------------------------------------------------------------
// Clue mode: pictorank gives the clue, the player guesses
// ---------------------------------------------------------------------------------------------

let secret = null;       // the round on screen, {round, options}: pictorank picked the word (it stays on the
                         // server until the guess); null when none, or when it shows the player's own word's clue
let giveAnswered = false;
let giveSeq = 0;         // number of the latest round asked for: older replies are stale

async function newSecret() {
  // pictorank draws a puzzle, picks the secret word among its options and clues it.
  const seq = ++giveSeq;
  secret = null;
  resetGive("Drawing a secret word...");
  let round;
  try {
    round = await api("GET", "/clues/random");
  } catch (err) {
    if (seq === giveSeq) setStatus($("give-status"), err.message, true);
    return;
  }
  if (seq !== giveSeq) return;  // stale: a newer round was asked for
  showGive({ round: round.id, options: round.options }, round.pictograms, "a secret word");
}

async function clueOwnWord() {
  const word = $("give-word").value.trim();
  if (!word) {
    setStatus($("give-status"), "Type a word first.", true);
    $("give-word").focus();
    return;
  }
  const seq = ++giveSeq;
  secret = null;
  resetGive(`Finding a clue for "${word}"...`);
  let result;
  try {  // no rivals given: pictorank's nearest known words stand in
    result = await api("POST", "/suggest", { word, avoid: [], top: 1, use_known: true });
  } catch (err) {
    if (seq === giveSeq) setStatus($("give-status"), err.message, true);
    return;
  }
  if (seq !== giveSeq) return;
  showOwnClue(result.word, result.suggestions[0], result.avoid);
}

function showOwnClue(word, suggestion, rivals) {
  // The player typed the word: nothing to guess, so pictorank shows its clue and its reasons at
  // once, with how its guesser ranks the word among the known words nearest to it.
  secret = null;
  giveAnswered = true;
  $("give-clue").replaceChildren(...suggestion.pictograms.map((p, i) => clueCard(asHint(p), i)));
  const judged = suggestion.rank === 1 ? "first" : `at position ${suggestion.rank}`;
  const known = suggestion.known ? " It is a person's clue from the training data." : "";
  setStatus($("give-status"), `pictorank's clue for "${word}": ${clueText(suggestion)}. Its guesser puts "${word}" ` +
    `${judged} of ${suggestion.options}, against the ${rivals.length} words pictorank knows nearest to it ` +
    `(${rivals.slice(0, 5).join(", ")}${rivals.length > 5 ? ", ..." : ""}).${known}`);
  renderGiveWhy(suggestion);
  $("give-explain").hidden = false;
}

function resetGive(text) {
  giveAnswered = false;
  setStatus($("give-status"), text);
  $("give-clue").replaceChildren();
  $("give-options").replaceChildren();
  $("give-options-title").hidden = true;
  $("give-verdict").hidden = true;
  $("give-explain").hidden = true;
}

function showGive(round, pictograms, whose) {
  secret = round;
  $("give-clue").replaceChildren(...pictograms.map((p, i) => clueCard(asHint(p), i)));
  $("give-options-title").hidden = false;
  $("give-options").replaceChildren(...round.options.map((option, i) => {
    const button = el("button", { type: "button", textContent: option });
    button.dataset.option = option;
    if (i < 10) button.setAttribute("aria-keyshortcuts", String((i + 1) % 10));
    button.addEventListener("click", () => guessSecret(option));
    return button;
  }));
  setStatus($("give-status"), `pictorank's clue for ${whose}: ${pictograms.length} pictograms, ` +
    `${round.options.length} words. Which is it?` + (TOUCH ? " Tap it." : ` (${KEYS_HINT})`));
}

async function guessSecret(option) {
  // The server says which word it was, and why the clue.
  if (!secret || giveAnswered) return;
  giveAnswered = true;
  const round = secret;
  let verdict;
  try {
    verdict = await api("POST", `/clues/${encodeURIComponent(round.round)}/guess`, { guess: option });
  } catch (err) {
    if (secret !== round) return;
    giveAnswered = false;  // let the player try again
    setStatus($("give-status"), err.message, true);
    return;
  }
  if (secret !== round) return;  // stale: a new round was drawn meanwhile
  showVerdict(option, verdict.answer, verdict.clue);
}

function showVerdict(option, word, suggestion) {
  for (const b of $("give-options").querySelectorAll("button")) {
    b.disabled = true;
    if (b.dataset.option === word) b.classList.add("answer");
    else if (b.dataset.option === option) b.classList.add("wrong");
  }
  const right = option === word;
  const verdict = $("give-verdict");
  verdict.className = `verdict ${right ? "right" : "wrong"}`;
  verdict.textContent = right ? `Right! The word is "${word}".` : `Wrong: you picked "${option}", the word is "${word}".`;
  const judged = suggestion.rank === 1 ? "first" : `at position ${suggestion.rank}`;
  const known = suggestion.known ? " It is a person's clue from the training data." : "";
  verdict.append(el("span", { className: "help",
    textContent: ` With this clue pictorank's guesser puts "${word}" ${judged} of ${suggestion.options}.${known}` }));
  verdict.hidden = false;
  renderGiveWhy(suggestion);
  $("give-explain").hidden = false;
  keepInView(verdict, $("give-next"));
}

// After a pick the verdict must stay on screen: focusing "Next" used to scroll it away.
function keepInView(verdict, next) {
  next.focus({ preventScroll: true });
  verdict.scrollIntoView({ block: "nearest" });
}

function renderGiveWhy(suggestion) {
  $("give-why").replaceChildren(...suggestion.pictograms.map((p) => {
    const item = el("li", {}, [
      el("span", { className: "word", textContent: shortName(p.description) }),
      el("span", { className: "summary", textContent: p.reason }),
    ]);
    item.dataset.hintId = String(p.id);
    return item;
  }));
}

$("give-new").addEventListener("click", newSecret);
$("give-next").addEventListener("click", newSecret);
$("give-own").addEventListener("submit", (event) => {
  event.preventDefault();
  clueOwnWord();
});

document.addEventListener("keydown", (event) => {
  // Number keys pick a word in Clue mode, unless the player is typing somewhere.
  if ($("panel-give").hidden || !secret || giveAnswered) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) return;
  if (!/^[0-9]$/.test(event.key)) return;
  const index = event.key === "0" ? 9 : Number(event.key) - 1;
  if (index < secret.options.length) {
    event.preventDefault();
    guessSecret(secret.options[index]);
  }
});

// ---------------------------------------------------------------------------------------------
// Start
// ---------------------------------------------------------------------------------------------

if (TOUCH) $("hint-search-help").textContent = "Type to search, then tap a result to add it to the clue.";
api("GET", "/health").then((r) => { if (r.model) $("model-name").textContent = `Model: ${r.model}`; }).catch(() => {});
renderClue();
newPuzzle();
