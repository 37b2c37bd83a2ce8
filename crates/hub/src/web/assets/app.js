// The web roster's page: reads the token from the URL's fragment (never
// sent to the server in a URL), then streams the roster from
// /api/events with it in the Authorization header. Builds the page with
// DOM calls only: no HTML is made from the hub's data.
'use strict';

(function () {
  const SAMPLES = 60;
  const fragment = new URLSearchParams(location.hash.slice(1));
  let token = fragment.get('token') || sessionStorage.getItem('flotilla-web-token') || '';
  if (fragment.get('token')) {
    sessionStorage.setItem('flotilla-web-token', token);
    history.replaceState(null, '', location.pathname);
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  }

  function setStatus(text, kind) {
    const s = document.getElementById('status');
    s.textContent = text;
    s.className = kind;
  }

  function ms(v) {
    return v == null ? '—' : v.toFixed(2) + ' ms';
  }

  function when(ts) {
    if (!ts) return '—';
    const d = new Date(ts);
    const ago = Math.max(0, Math.round((Date.now() - d.getTime()) / 1000));
    if (ago < 90) return ago + ' s ago';
    if (ago < 5400) return Math.round(ago / 60) + ' min ago';
    return d.toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
  }

  function strip(health) {
    const s = el('div', { class: 'strip', title: 'one bar a second, newest on the right' });
    for (let i = health.length; i < SAMPLES; i++) s.append(el('span', { class: 'bar' }));
    for (const h of health) {
      const tip = h.online ? 'online' + (h.rtt_ms == null ? '' : ', ' + ms(h.rtt_ms)) : 'offline';
      s.append(el('span', { class: 'bar ' + (h.online ? 'up' : 'down'), title: tip }));
    }
    return s;
  }

  function fill(tbody, rows, empty, cols) {
    tbody.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { class: 'empty', colspan: String(cols) }, empty))]));
  }

  let updates = 0;

  function render(r) {
    document.body.dataset.updates = String(++updates);
    document.getElementById('hub').textContent = r.hub;
    document.title = 'Flotilla hub ' + r.hub;
    fill(document.querySelector('#hosts tbody'), r.hosts.map(h =>
      el('tr', { class: 'host', 'data-host': h.host, 'data-state': h.state },
        el('td', {}, h.host),
        el('td', { class: h.state }, h.state),
        el('td', {}, h.state === 'online' ? ms(h.rtt_ms) : '—'),
        el('td', { title: h.last_seen }, when(h.last_seen)),
        el('td', {}, h.queued.messages + ' msg, ' + h.queued.bytes + ' B'),
        el('td', {}, String(h.peers)),
        el('td', {}, String(h.lanes)),
        el('td', {}, strip(h.health)))), 'no host has linked yet', 8);
    const groups = document.getElementById('groups');
    groups.replaceChildren(...(r.groups.length ? r.groups.map(g =>
      el('div', { class: 'group', 'data-group': g.group },
        el('h3', {}, g.group),
        el('ul', {}, ...g.peers.map(p =>
          el('li', { class: p.host_state, 'data-peer': p.id }, p.id + ' (' + p.kind + ')'))))) :
      [el('p', { class: 'empty' }, 'no shared group')]));
    fill(document.querySelector('#lanes tbody'), r.lanes.map(l =>
      el('tr', { 'data-lane': l.id },
        el('td', {}, l.id),
        el('td', {}, l.product || '—'),
        el('td', {}, l.groups.filter(g => !g.startsWith('session:')).join(', ') || '—'),
        el('td', { class: l.host_state }, l.host_state))), 'no lane', 4);
    if (r.error) setStatus('the hub does not answer (' + r.error + '); showing what it last said', 'bad');
    else setStatus('live', 'ok');
  }

  function handle(block) {
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (event === 'roster' && data.length) render(JSON.parse(data.join('\n')));
  }

  const sleep = t => new Promise(done => setTimeout(done, t));

  async function stream() {
    for (;;) {
      try {
        const res = await fetch('/api/events', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
        if (res.status === 401) {
          setStatus('the token is missing or wrong: open the URL printed when the web roster started', 'bad');
          return;
        }
        if (!res.ok) throw new Error('HTTP ' + res.status);
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          let end;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            handle(buf.slice(0, end));
            buf = buf.slice(end + 2);
          }
        }
      } catch (e) {
        // Reconnect below.
      }
      setStatus('reconnecting…', 'warn');
      await sleep(2000);
    }
  }

  stream();
})();
