// The pickers of the cataloguing forms (deposit, edit, new collection).
// Without script, a picked field's value input names its vocabulary's
// datalist, which the browser offers as one types. With it, the input
// becomes a combobox (the ARIA pattern, the same in every browser): as
// one types, a list of up to 12 names that hold what was typed opens
// under it (names that begin with it first); ArrowDown and ArrowUp move
// through them, Enter takes one (its code or address goes into the
// input), Escape closes the list. The name of the value is shown under
// the input, and a row whose field changes gets the new field's list.
"use strict";
(function () {
  var rows = document.getElementById("meta-rows");
  if (!rows) { return; }
  var max = 12;
  var box = document.createElement("ul");
  box.id = "picker-list";
  box.className = "picker-list";
  box.setAttribute("role", "listbox");
  box.hidden = true;
  rows.parentNode.insertBefore(box, rows.nextSibling);
  var input = null, shown = [], active = -1, taken = false;

  function rowOf(el) { return el.closest("li.meta-row"); }
  function valueOf(row) { return row.querySelector('input[name="value"]'); }
  function vocabOf(row) {
    var sel = row.querySelector("select"), o = sel && sel.options[sel.selectedIndex];
    return o ? o.getAttribute("data-vocab") : null;
  }
  function listOf(vocab) { return vocab ? document.getElementById("vocab-" + vocab) : null; }
  function fold(s) { return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase(); }
  function isPicker(el) { return el && el.matches('input[name="value"][role="combobox"]'); }

  // showName writes the name of the row's value under it: a name from
  // the list, or the one the page gave the stored value.
  function showName(row) {
    var val = valueOf(row), name = row.querySelector(".value-name");
    if (!val || !name) { return; }
    var list = listOf(vocabOf(row)), v = val.value.trim(), text = "";
    for (var i = 0; list && i < list.options.length; i++) {
      if (list.options[i].value === v) { text = list.options[i].textContent; break; }
    }
    if (!text && list && v !== "" && val.defaultValue.trim() === v) { text = name.dataset.stored || ""; }
    name.textContent = text;
  }

  // setup makes a row's value input a combobox when its field is picked.
  function setup(row) {
    var val = valueOf(row);
    if (!val) { return; }
    val.removeAttribute("list");
    if (listOf(vocabOf(row))) {
      val.setAttribute("role", "combobox");
      val.setAttribute("aria-autocomplete", "list");
      val.setAttribute("aria-expanded", "false");
      val.setAttribute("aria-controls", box.id);
      val.setAttribute("autocomplete", "off");
    } else {
      ["role", "aria-autocomplete", "aria-expanded", "aria-controls", "aria-activedescendant"].forEach(function (a) { val.removeAttribute(a); });
    }
    showName(row);
  }

  function matches(vocab, q) {
    var list = listOf(vocab), first = [], more = [], f = fold(q.trim());
    if (!list || f === "") { return []; }
    for (var i = 0; i < list.options.length && first.length < max; i++) {
      var o = list.options[i], label = fold(o.textContent), at = label.indexOf(f);
      if (at === 0 || fold(o.value) === f) { first.push(o); } else if (at > 0 || fold(o.value).indexOf(f) === 0) { more.push(o); }
    }
    return first.concat(more).slice(0, max);
  }

  function close() {
    if (input) {
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
    }
    box.hidden = true;
    box.textContent = "";
    rows.parentNode.insertBefore(box, rows.nextSibling); // out of the rows, which are cloned
    shown = []; active = -1; input = null;
  }

  function open(el) {
    var row = rowOf(el), vocab = vocabOf(row);
    shown = matches(vocab, el.value);
    if (shown.length === 0) { close(); return; }
    input = el; active = -1;
    box.textContent = "";
    var sel = row.querySelector("select");
    box.setAttribute("aria-label", sel.options[sel.selectedIndex].textContent);
    shown.forEach(function (o, i) {
      var li = document.createElement("li");
      li.id = "picker-opt-" + i;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      li.textContent = o.textContent;
      if (vocab === "language") {
        var code = document.createElement("span");
        code.className = "code";
        code.textContent = " " + o.value;
        li.appendChild(code);
      }
      li.addEventListener("click", function () { choose(i); });
      box.appendChild(li);
    });
    el.parentNode.appendChild(box);
    box.hidden = false;
    el.setAttribute("aria-expanded", "true");
  }

  function move(step) {
    if (shown.length === 0) { return; }
    if (active >= 0) { box.children[active].setAttribute("aria-selected", "false"); }
    active = (active + step + shown.length) % shown.length;
    var li = box.children[active];
    li.setAttribute("aria-selected", "true");
    input.setAttribute("aria-activedescendant", li.id);
    li.scrollIntoView({ block: "nearest" });
  }

  function choose(i) {
    var el = input, o = shown[i];
    if (!el || !o) { return; }
    el.value = o.value;
    el.removeAttribute("aria-invalid");
    close();
    showName(rowOf(el));
    el.focus();
  }

  rows.querySelectorAll(".value-name").forEach(function (n) { n.dataset.stored = n.textContent; });
  rows.querySelectorAll("li.meta-row").forEach(setup);
  box.addEventListener("mousedown", function (e) { e.preventDefault(); }); // the input keeps the focus
  rows.addEventListener("change", function (e) {
    if (e.target.matches("select")) { close(); setup(rowOf(e.target)); }
  });
  rows.addEventListener("input", function (e) {
    if (!e.target.matches('input[name="value"]')) { return; }
    e.target.removeAttribute("aria-invalid");
    showName(rowOf(e.target));
    if (isPicker(e.target)) { open(e.target); }
  });
  rows.addEventListener("keydown", function (e) {
    if (!isPicker(e.target)) { return; }
    var isOpen = input === e.target && !box.hidden;
    switch (e.key) {
      case "ArrowDown":
        if (!isOpen) { open(e.target); }
        move(1);
        e.preventDefault();
        break;
      case "ArrowUp":
        if (isOpen) { move(-1); e.preventDefault(); }
        break;
      case "Enter":
        if (isOpen && active >= 0) { choose(active); e.preventDefault(); taken = true; }
        break;
      case "Escape":
        if (isOpen) { close(); e.preventDefault(); }
        break;
      case "Tab":
        close();
        break;
    }
  });
  // the Enter that took a name does not send the form (some browsers and
  // drivers send its keypress even though its keydown was handled)
  rows.addEventListener("keypress", function (e) {
    if (taken && e.key === "Enter") { e.preventDefault(); }
    taken = false;
  });
  rows.addEventListener("keyup", function () { taken = false; });
  rows.addEventListener("focusout", function (e) {
    if (e.target === input) { close(); }
  });
})();
