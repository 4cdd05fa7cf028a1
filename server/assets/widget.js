// Heddle's chat widget: a chat bubble for a published chat graph, on any
// page of an allowed origin. Embed it with
//   <script src="https://heddle.example/widget.js" data-heddle-widget="<token>" async></script>
// Options (data attributes on the script tag) override the widget's own:
// data-title, data-color, data-position ("right" or "left").
// The conversation is kept per browser (localStorage), so it goes on after
// a reload; it is a thread the graph's owner can open in Heddle.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var token = script.getAttribute("data-heddle-widget");
  if (!token) return;
  var base = new URL(script.src).origin;
  var api = base + "/api/v1/widget/" + encodeURIComponent(token);
  var storageKey = "heddle-widget:" + token;

  function conversation() {
    var id = null;
    try { id = window.localStorage.getItem(storageKey); } catch (e) { /* private mode */ }
    if (!id) {
      var bytes = new Uint8Array(16);
      window.crypto.getRandomValues(bytes);
      id = Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
      try { window.localStorage.setItem(storageKey, id); } catch (e) { /* kept for this page only */ }
    }
    return id;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    if (text) node.textContent = text;
    return node;
  }

  var host = el("div", { "data-heddle-widget-root": "" });
  var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;
  document.body.appendChild(host);

  function render(config) {
    var color = script.getAttribute("data-color") || config.color || "#4f46e5";
    var side = (script.getAttribute("data-position") || config.position || "right") === "left" ? "left" : "right";
    var title = script.getAttribute("data-title") || config.title || "Chat";
    var style = el("style");
    style.textContent =
      ":host{all:initial}" +
      ".bubble{position:fixed;bottom:20px;" + side + ":20px;width:56px;height:56px;border-radius:50%;border:0;" +
      "display:flex;align-items:center;justify-content:center;" +
      "background:" + color + ";color:#fff;font:600 24px/1 system-ui,sans-serif;cursor:pointer;" +
      "box-shadow:0 4px 14px rgba(0,0,0,.25);z-index:2147483000}" +
      ".panel{position:fixed;bottom:88px;" + side + ":20px;width:min(360px,calc(100vw - 40px));height:min(520px,calc(100vh - 120px));" +
      "display:none;flex-direction:column;background:#fff;color:#161a20;border-radius:12px;overflow:hidden;" +
      "box-shadow:0 8px 30px rgba(0,0,0,.25);font:14px/1.45 system-ui,sans-serif;z-index:2147483000}" +
      ".panel.open{display:flex}" +
      ".head{background:" + color + ";color:#fff;padding:12px 14px;font-weight:600}" +
      ".log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:8px}" +
      ".msg{max-width:85%;padding:8px 10px;border-radius:10px;white-space:pre-wrap;word-wrap:break-word}" +
      ".user{align-self:flex-end;background:" + color + ";color:#fff}" +
      ".assistant{align-self:flex-start;background:#f0f2f5}" +
      ".note{align-self:center;color:#55606e;font-size:12px}" +
      "form{display:flex;gap:8px;padding:10px;border-top:1px solid #dfe3e8}" +
      "input{flex:1;min-width:0;padding:8px 10px;border:1px solid #c5ccd5;border-radius:8px;font:inherit}" +
      "button.send{padding:8px 12px;border:0;border-radius:8px;background:" + color + ";color:#fff;font:inherit;cursor:pointer}" +
      "button:disabled{opacity:.6;cursor:default}";
    root.appendChild(style);
    var bubble = el("button", { "class": "bubble", "type": "button", "aria-label": "Open the chat: " + title });
    // A speech balloon drawn, not an emoji: every system has the glyphs.
    bubble.innerHTML =
      '<svg width="26" height="26" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" ' +
      'stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">' +
      '<path d="M21 12a8 8 0 0 1-11.6 7.1L4 20l1.1-4.6A8 8 0 1 1 21 12z"/></svg>';
    var panel = el("div", { "class": "panel", "role": "dialog", "aria-label": title });
    var log = el("div", { "class": "log", "aria-live": "polite" });
    var form = el("form");
    var input = el("input", { "type": "text", "placeholder": "Write a message…", "aria-label": "Your message", "maxlength": "4000" });
    var send = el("button", { "class": "send", "type": "submit" }, "Send");
    form.appendChild(input);
    form.appendChild(send);
    panel.appendChild(el("div", { "class": "head" }, title));
    panel.appendChild(log);
    panel.appendChild(form);
    root.appendChild(panel);
    root.appendChild(bubble);
    if (config.greeting) add("assistant", config.greeting);
    if (config.refused) {
      add("note", config.refused);
      input.disabled = true;
      send.disabled = true;
    }
    bubble.addEventListener("click", function () {
      panel.classList.toggle("open");
      if (panel.classList.contains("open")) input.focus();
    });
    function add(kind, text) {
      var node = el("div", { "class": "msg " + kind }, text);
      log.appendChild(node);
      log.scrollTop = log.scrollHeight;
      return node;
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var text = input.value.trim();
      if (!text) return;
      input.value = "";
      add("user", text);
      var reply = add("assistant", "…");
      send.disabled = true;
      ask(text, reply).then(function () { send.disabled = false; input.focus(); });
    });
    function ask(text, reply) {
      var streamed = "";
      // text/plain keeps the request "simple": no preflight.
      return fetch(api + "/messages", {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: JSON.stringify({ conversation: conversation(), message: text }),
      }).then(function (response) {
        if (!response.ok) {
          return response.json().then(function (body) {
            reply.textContent = (body && body.error && body.error.message) || "The chat is not available.";
            reply.className = "msg note";
          });
        }
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        function handle(block) {
          var name = "message", data = "";
          block.split("\n").forEach(function (line) {
            if (line.indexOf("event:") === 0) name = line.slice(6).trim();
            else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
          });
          if (!data) return;
          var value = JSON.parse(data);
          if (name === "token" && value.text) {
            streamed += value.text;
            reply.textContent = streamed;
          } else if (name === "reply") {
            if (value.failed) {
              reply.textContent = "Something went wrong; try again.";
              reply.className = "msg note";
            } else if (value.text && (!streamed || value.asking)) {
              reply.textContent = value.text;
            }
          } else if (name === "error") {
            reply.textContent = (value.error && value.error.message) || "The chat is not available.";
            reply.className = "msg note";
          }
          log.scrollTop = log.scrollHeight;
        }
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) return;
            buffer += decoder.decode(chunk.value, { stream: true });
            var blocks = buffer.split("\n\n");
            buffer = blocks.pop();
            blocks.forEach(handle);
            return pump();
          });
        }
        return pump();
      }).catch(function () {
        reply.textContent = "The chat could not be reached.";
        reply.className = "msg note";
      });
    }
  }

  fetch(api).then(function (response) {
    return response.json().then(function (body) {
      if (response.ok) return body;
      return { refused: (body && body.error && body.error.message) || "The chat is not available here." };
    });
  }).catch(function () {
    return { refused: "The chat could not be reached." };
  }).then(render);
})();
