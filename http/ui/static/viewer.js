// The work page's book viewer: Mirador (static/vendor/mirador.min.js,
// loaded after this script) mounted on the work's IIIF manifest in one
// window with no workspace around it, opened at the page ?page= names and,
// with ?q=, searching the book for those words. As the reader turns pages
// the address follows (?page=), so it can be shared or bookmarked. Without
// script the page's thumbnails below are the way through the book.
//
// Mirador's components put their styles into <style> elements made at run
// time. The page's Content-Security-Policy allows style elements that carry
// this response's nonce, which the server gives this script's own element;
// until the page is left, every <style> element the page's scripts make
// gets it. The nonce is read here, before Mirador runs.
"use strict";
(function () {
  var nonce = document.currentScript && document.currentScript.nonce;
  if (nonce) {
    var create = Document.prototype.createElement;
    Document.prototype.createElement = function (name, options) {
      var el = create.call(this, name, options);
      if (typeof name === "string" && name.toLowerCase() === "style") {
        el.setAttribute("nonce", nonce);
      }
      return el;
    };
  }

  // pageOf is the file set id of a canvas ({base}/iiif/{work}/canvas/{id}).
  function pageOf(canvas) {
    var i = canvas ? canvas.lastIndexOf("/canvas/") : -1;
    return i < 0 ? "" : canvas.slice(i + "/canvas/".length);
  }

  // mend fixes what Mirador's components (Material-UI 4) get wrong for
  // assistive technology, as they appear: a second h1 (a hidden "Mirador
  // viewer"; the page has its own h1, and the section its heading) becomes
  // a paragraph; the side bar's tabs say their orientation on a box
  // without a role instead of on the tab list; and a search hit's scroll
  // wrapper (a div) comes between the results' list and its item, so the
  // wrapper becomes the list item; and a side panel's scrolling box (the
  // search's results, which scroll when the panel lies below the image on
  // a narrow screen) takes the focus, so that the keyboard scrolls it.
  function mend(root) {
    root.querySelectorAll(".mirador-scrollto-scrollable:not([tabindex])").forEach(function (box) {
      box.setAttribute("tabindex", "0");
    });
    root.querySelectorAll("h1").forEach(function (h) {
      var p = document.createElement("p");
      p.className = h.className;
      p.textContent = h.textContent;
      h.replaceWith(p);
    });
    root.querySelectorAll(".MuiTabs-root[aria-orientation]").forEach(function (tabs) {
      var list = tabs.querySelector('[role="tablist"]');
      if (list && !list.hasAttribute("aria-orientation")) {
        list.setAttribute("aria-orientation", tabs.getAttribute("aria-orientation"));
      }
      tabs.removeAttribute("aria-orientation");
    });
    root.querySelectorAll("ul > div:not([role])").forEach(function (wrap) {
      var item = wrap.firstElementChild;
      if (item && item.tagName === "LI" && wrap.children.length === 1) {
        wrap.setAttribute("role", "listitem");
        item.setAttribute("role", "none");
      }
    });
  }

  // firstLanguage puts lang first in every IIIF language map of a
  // manifest (an object whose keys are language tags or "none" and whose
  // values are lists of strings), then "none", then English: Mirador
  // picks the reader's language for some labels but shows the first value
  // of a map for others (a rendering's, a requiredStatement's), so that a
  // map's order decides what the reader sees. The manifest is the same for
  // every reader (and kept by caches); its order is made here, for this
  // page's language.
  var langTag = /^(none|[a-z]{2,3}(-[A-Za-z0-9]{1,8})*)$/;
  function isLangMap(o) {
    var keys = Object.keys(o);
    if (keys.length === 0) {
      return false;
    }
    return keys.every(function (k) {
      return langTag.test(k) && Array.isArray(o[k]) && o[k].every(function (v) { return typeof v === "string"; });
    });
  }
  function firstLanguage(o, lang, depth) {
    if (depth > 64 || o === null || typeof o !== "object") {
      return o;
    }
    if (Array.isArray(o)) {
      for (var i = 0; i < o.length; i++) {
        o[i] = firstLanguage(o[i], lang, depth + 1);
      }
      return o;
    }
    if (isLangMap(o)) {
      var out = {};
      [lang, "none", "en"].forEach(function (k) {
        if (Object.prototype.hasOwnProperty.call(o, k) && !Object.prototype.hasOwnProperty.call(out, k)) {
          out[k] = o[k];
        }
      });
      Object.keys(o).forEach(function (k) {
        if (!Object.prototype.hasOwnProperty.call(out, k)) {
          out[k] = o[k];
        }
      });
      return out;
    }
    Object.keys(o).forEach(function (k) {
      o[k] = firstLanguage(o[k], lang, depth + 1);
    });
    return o;
  }

  function mount() {
    var el = document.getElementById("viewer-mount");
    if (!el || !window.Mirador || typeof window.Mirador.viewer !== "function") {
      return;
    }
    var params = new URLSearchParams(window.location.search);
    var q = (params.get("q") || "").trim();
    var win = {
      manifestId: el.dataset.manifest,
      thumbnailNavigationPosition: "far-bottom"
    };
    if (el.dataset.canvas) {
      win.canvasId = el.dataset.canvas;
    }
    if (q) {
      win.defaultSearchQuery = q;
      win.sideBarOpen = true;
      win.sideBarPanel = "search";
    }
    el.hidden = false;
    var fallback = document.getElementById("viewer-fallback");
    if (fallback) {
      fallback.hidden = true;
    }
    var lang = document.documentElement.lang || "en";
    // the languages of the interface Mirador does not ship
    // (viewer-lang.js, loaded before this script)
    var extra = window.shelfmarkViewerTranslations || {};
    var translations = {};
    if (Object.prototype.hasOwnProperty.call(extra, lang)) {
      translations[lang] = extra[lang];
    }
    var viewer = window.Mirador.viewer({
      id: el.id,
      language: lang,
      translations: translations,
      requests: {
        postprocessors: [function (url, action) {
          if (action && action.manifestJson) {
            action.manifestJson = firstLanguage(action.manifestJson, lang, 0);
          }
          return action;
        }]
      },
      windows: [win],
      window: {
        allowClose: false,
        allowMaximize: false,
        allowFullscreen: true,
        hideWindowTitle: true,
        panels: { info: true, attribution: true, canvas: true, annotations: false, search: true, layers: false }
      },
      workspace: {
        type: "mosaic",
        allowNewWindows: false,
        draggingEnabled: false,
        isWorkspaceAddVisible: false,
        showZoomControls: true
      },
      workspaceControlPanel: { enabled: false }
    });
    // for the page's own scripts and its browser test
    window.shelfmarkViewer = viewer;
    mend(el);
    new MutationObserver(function () { mend(el); }).observe(el, { subtree: true, childList: true, attributes: true, attributeFilter: ["aria-orientation"] });

    // the address follows the page shown
    var shown = el.dataset.canvas || "";
    viewer.store.subscribe(function () {
      var windows = viewer.store.getState().windows || {};
      var ids = Object.keys(windows);
      var canvas = ids.length ? windows[ids[0]].canvasId : "";
      if (!canvas || canvas === shown) {
        return;
      }
      var first = shown === "" && !params.has("page");
      shown = canvas;
      if (first) {
        return; // the first page, opened by default: the address stays
      }
      var page = pageOf(canvas);
      if (!page) {
        return;
      }
      params.set("page", page);
      params.delete("after");
      window.history.replaceState(null, "", window.location.pathname + "?" + params.toString() + window.location.hash);
    });
  }

  // Mirador's script runs after this one (both deferred), before
  // DOMContentLoaded
  var mounted = false;
  function once() {
    if (!mounted && window.Mirador) {
      mounted = true;
      mount();
    }
  }
  document.addEventListener("DOMContentLoaded", once);
  window.addEventListener("load", once);
  if (document.readyState === "complete") {
    once();
  }
})();
