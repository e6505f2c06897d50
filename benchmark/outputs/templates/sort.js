// Sortable tables: every <table class="sortable">; click a header to sort by that column, again
// to reverse. Cells carry their sort value in data-v (numbers, or text for data-type="text");
// cells without a number always sort last. Ties keep the previous order (stable sort).
(function () {
  "use strict";
  function value(row, index, numeric) {
    var cell = row.children[index];
    var raw = cell ? cell.getAttribute("data-v") : null;
    if (!numeric) return raw === null ? "" : raw.toLowerCase();
    var number = raw === null || raw === "" ? NaN : parseFloat(raw);
    return isFinite(number) ? number : null;
  }
  function sortBy(table, header, index) {
    var button = header.querySelector("button");
    var numeric = button.getAttribute("data-type") === "number";
    var current = header.getAttribute("aria-sort");
    var descending = current === "none" ? numeric : current === "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, position) { return [value(row, index, numeric), position, row]; });
    keyed.sort(function (a, b) {
      if (a[0] === null || b[0] === null) {
        if (a[0] === null && b[0] === null) return a[1] - b[1];
        return a[0] === null ? 1 : -1;
      }
      var order = a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
      return (descending ? -order : order) || a[1] - b[1];
    });
    keyed.forEach(function (item) { body.appendChild(item[2]); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) { cell.setAttribute("aria-sort", "none"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      header.querySelector("button").addEventListener("click", function () { sortBy(table, header, index); });
    });
  });
  document.documentElement.setAttribute("data-rendered", performance.now().toFixed(1));
})();
