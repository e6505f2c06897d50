// The per-pair explorer. Reads the page's embedded JSON (see sourcesum.board.pairs.explorer_data)
// and renders, with DOM methods only (text is never parsed as HTML): the chosen pair's summary and
// sentences shaded by votes (or, without votes, by graded relevance relative to the pair's highest) with each chosen ranker's score and rank and the pair's value of every
// board measure, and the list of pairs sorted by the per-pair difference of one measure (the first
// by default) between rankers A and B. State lives in the URL hash
// (#pair=ID&a=LABEL&b=LABEL&m=KEY&show=LABEL...), so a view can be linked.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var state = { pair: 0, a: 0, b: Math.min(1, D.rankers.length - 1), m: 0, show: [], betterB: false };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function fixed(x, digits) { return x === null ? "-" : x.toFixed(digits); }
  function signed(x) { return x === null ? "n/a" : (x > 0 ? "+" : x < 0 ? "\u2212" : "\u00b1") + Math.abs(x).toFixed(4); }
  // 1 + the number of larger scores (ties share their best rank), the rule the page's data
  // ranks by; the data gives the exact rank of each sentence whose rank rounding changed
  function ranksOf(scores) {
    var first = new Map();
    scores.slice().sort(function (x, y) { return y - x; }).forEach(function (v, k) {
      if (!first.has(v)) first.set(v, k);
    });
    return scores.map(function (v) { return 1 + first.get(v); });
  }
  function rankerIndex(label) {
    for (var j = 0; j < D.rankers.length; j++) if (D.rankers[j].label === label) return j;
    return -1;
  }
  function measureIndex(key) {
    for (var k = 0; k < D.measures.length; k++) if (D.measures[k].key === key) return k;
    return -1;
  }
  function pairIndex(id) {
    for (var i = 0; i < D.pairs.length; i++) if (D.pairs[i].id === id) return i;
    return -1;
  }

  function readHash() {
    var params = new URLSearchParams(location.hash.slice(1));
    var pair = pairIndex(params.get("pair") || "");
    if (pair >= 0) state.pair = pair;
    var a = rankerIndex(params.get("a") || ""), b = rankerIndex(params.get("b") || "");
    if (a >= 0) state.a = a;
    if (b >= 0) state.b = b;
    var m = measureIndex(params.get("m") || "");
    if (m >= 0) state.m = m;
    var shown = params.getAll("show").map(rankerIndex).filter(function (j) { return j >= 0; });
    state.show = params.has("show") ? shown : [state.a, state.b].filter(function (j, k, all) { return j >= 0 && all.indexOf(j) === k; });
  }
  function writeHash() {
    var params = new URLSearchParams();
    params.set("pair", D.pairs[state.pair].id);
    if (D.rankers.length) {
      params.set("a", D.rankers[state.a].label);
      params.set("b", D.rankers[state.b].label);
      params.set("m", D.measures[state.m].key);
      state.show.forEach(function (j) { params.append("show", D.rankers[j].label); });
    }
    history.replaceState(null, "", "#" + params.toString());
  }

  function fillControls() {
    var select = $("pair");
    D.pairs.forEach(function (pair, i) {
      var option = el("option", "", (i + 1) + ". " + pair.summary.slice(0, 60));
      option.value = String(i);
      select.appendChild(option);
    });
    select.addEventListener("change", function () { openPair(Number(select.value), false); });
    [["ranker-a", "a"], ["ranker-b", "b"]].forEach(function (item) {
      var chooser = $(item[0]);
      D.rankers.forEach(function (ranker, j) {
        var option = el("option", "", ranker.name);
        option.value = String(j);
        option.title = ranker.label;
        chooser.appendChild(option);
      });
      chooser.value = String(state[item[1]]);
      chooser.addEventListener("change", function () { state[item[1]] = Number(chooser.value); renderList(); writeHash(); });
    });
    var measure = $("measure");
    D.measures.forEach(function (m, k) {
      var option = el("option", "", m.name);
      option.value = String(k);
      measure.appendChild(option);
    });
    measure.value = String(state.m);
    measure.addEventListener("change", function () { state.m = Number(measure.value); renderList(); writeHash(); });
    $("order").addEventListener("click", function () {
      state.betterB = !state.betterB;
      $("order").textContent = state.betterB ? "A better first" : "B better first";
      renderList();
    });
    var boxes = $("rankers");
    D.rankers.forEach(function (ranker, j) {
      var label = el("label");
      var box = el("input");
      box.type = "checkbox";
      box.value = String(j);
      box.checked = state.show.indexOf(j) >= 0;
      box.addEventListener("change", function () {
        state.show = Array.prototype.filter.call(boxes.querySelectorAll("input"), function (b) { return b.checked; })
          .map(function (b) { return Number(b.value); });
        renderPair();
        writeHash();
      });
      label.appendChild(box);
      label.title = ranker.label;
      label.appendChild(document.createTextNode(" " + ranker.name + (ranker.reference ? " (reference)" : "")));
      boxes.appendChild(label);
    });
    if (!D.rankers.length) boxes.appendChild(el("span", "legend", "No ranker has scores on this split."));
  }

  function renderPair() {
    var pair = D.pairs[state.pair];
    var sentences = D.docs[pair.doc];
    $("pair").value = String(state.pair);
    $("pair-id").textContent = pair.id;
    $("summary").textContent = pair.summary;
    var measures = $("pair-measures");
    measures.replaceChildren();
    state.show.forEach(function (j) {
      var values = D.measures.map(function (m) { return m.name + " " + fixed(pair.values[m.key][j], 4); });
      var chip = el("li", "", D.rankers[j].name + ": " + values.join(", "));
      chip.setAttribute("data-ranker", D.rankers[j].label);
      measures.appendChild(chip);
    });
    var list = $("sentences");
    list.replaceChildren();
    var graded = D.relevance === "graded";
    var top = graded ? Math.max.apply(null, pair.votes.map(function (v) { return v[0]; })) : 0;
    var rankLists = {};
    state.show.forEach(function (j) {
      var own = ranksOf(pair.scores[j]), exact = pair.ranks[j] || {};
      Object.keys(exact).forEach(function (i) { own[Number(i)] = exact[i]; });
      rankLists[j] = own;
    });
    sentences.forEach(function (text, i) {
      var votes = pair.votes[i];
      var yes = votes.reduce(function (s, v) { return s + v; }, 0);
      var item = el("li", "sentence");
      item.setAttribute("data-index", String(i));
      item.setAttribute("data-votes", votes.join(","));
      var share = graded ? (top > 0 ? yes / top : 0) : yes / votes.length;
      if (yes) item.style.backgroundColor = "rgba(255, 166, 0, " + (0.1 + 0.5 * share).toFixed(3) + ")";
      var meta = el("div", "meta");
      meta.appendChild(el("span", "", "#" + i));
      meta.appendChild(el("span", "votes", graded ? "relevance " + yes : "votes " + yes + "/" + votes.length + " (" + votes.join(" ") + ")"));
      item.appendChild(meta);
      item.appendChild(el("p", "text", text));
      var scores = el("ul", "chips scores");
      state.show.forEach(function (j) {
        var rank = rankLists[j][i];
        var chip = el("li");
        chip.setAttribute("data-ranker", D.rankers[j].label);
        chip.setAttribute("data-score", String(pair.scores[j][i]));
        chip.setAttribute("data-rank", String(rank));
        chip.appendChild(document.createTextNode(D.rankers[j].name + " "));
        chip.appendChild(el("span", "score", String(pair.scores[j][i])));
        chip.appendChild(document.createTextNode(" "));
        chip.appendChild(el("span", "rank" + (rank === 1 ? " rank1" : ""), "#" + rank));
        scores.appendChild(chip);
      });
      item.appendChild(scores);
      list.appendChild(item);
    });
    Array.prototype.forEach.call($("pairs").querySelectorAll("button"), function (button) {
      if (Number(button.getAttribute("data-pair")) === state.pair) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    });
  }

  function renderList() {
    var list = $("pairs");
    list.replaceChildren();
    if (D.rankers.length < 2) {
      list.appendChild(el("li", "legend", "Needs two rankers with scores on this split."));
      return;
    }
    var a = state.a, b = state.b, sign = state.betterB ? -1 : 1, key = D.measures[state.m].key;
    var rows = D.pairs.map(function (pair, i) {
      var v = pair.values[key];
      var delta = v[a] === null || v[b] === null ? null : v[a] - v[b];
      return [delta, i];
    });
    rows.sort(function (x, y) {
      if (x[0] === null || y[0] === null) return x[0] === null ? (y[0] === null ? x[1] - y[1] : 1) : -1;
      return sign * (y[0] - x[0]) || x[1] - y[1];
    });
    rows.forEach(function (row) {
      var pair = D.pairs[row[1]];
      var item = el("li");
      var button = el("button");
      button.type = "button";
      button.setAttribute("data-pair", String(row[1]));
      button.setAttribute("data-delta", row[0] === null ? "" : String(row[0]));
      if (row[1] === state.pair) button.setAttribute("aria-current", "true");
      button.appendChild(el("span", "delta " + (row[0] > 0 ? "pos" : row[0] < 0 ? "neg" : ""), "\u0394 " + signed(row[0])));
      button.appendChild(document.createTextNode(" (A " + fixed(pair.values[key][a], 3) + ", B " + fixed(pair.values[key][b], 3) + ") "));
      button.appendChild(el("span", "", pair.summary.slice(0, 90)));
      button.addEventListener("click", function () { openPair(row[1], true); });
      item.appendChild(button);
      list.appendChild(item);
    });
  }

  function openPair(index, scroll) {
    state.pair = index;
    renderPair();
    writeHash();
    if (scroll) $("view").scrollIntoView();
  }

  readHash();
  fillControls();
  renderList();
  renderPair();
  document.documentElement.setAttribute("data-rendered", performance.now().toFixed(1));
  window.addEventListener("hashchange", function () {
    readHash();
    if (D.rankers.length) {
      $("ranker-a").value = String(state.a);
      $("ranker-b").value = String(state.b);
    }
    $("measure").value = String(state.m);
    Array.prototype.forEach.call($("rankers").querySelectorAll("input"), function (box) {
      box.checked = state.show.indexOf(Number(box.value)) >= 0;
    });
    renderList();
    renderPair();
  });
})();
