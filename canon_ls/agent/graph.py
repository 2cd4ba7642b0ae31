"""`canon graph`: one self-contained HTML page showing the store as a graph (SPEC §11.1, §12).

Nodes are articles, journal entries, assets and missing link targets; edges are wikilinks,
journal subjects, article → asset, and article → governing ancestor. The page loads nothing from
the network (a Content-Security-Policy forbids it) and never executes store content: store text
reaches the page only as HTML-escaped text in the index tables, and as JSON inside a
`<script type="application/json">` block with `<`, `>` and `&` escaped, which the page's own
script reads with JSON.parse and puts into the DOM with textContent.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from canon_ls.core import assets as assets_mod
from canon_ls.core.store import Store

# Above this many articles asset nodes are left out: the page stays usable in a browser.
ASSET_NODE_LIMIT = 2000


def graph_data(store: Store) -> dict[str, Any]:
    """Nodes and edges as plain data (also what the page embeds)."""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, str]] = []
    if not store.exists():
        return {"nodes": nodes, "edges": edges, "root": str(store.root), "assets_omitted": False}
    project_assets = assets_mod.Assets(store.project, store.root)
    orphans = set(assets_mod.orphans(store, project_assets))
    stale = assets_mod.stale(store, project_assets, assets_mod.ChangeTimes(store.project))
    addresses = store.addresses()
    known = set(addresses)
    with_assets = len(addresses) <= ASSET_NODE_LIMIT
    missing: set[str] = set()
    for address in addresses:
        art = store.article(address)
        if art is None:
            continue
        status = "stale" if address in stale else "orphan" if address in orphans else "ok"
        nodes.append(
            {
                "id": "a:" + address,
                "kind": "article",
                "label": address,
                "capsule": art.capsule,
                "updated": art.updated,
                "scope": art.scope,
                "status": status,
                "note": stale.get(address, ""),
                "problems": list(art.problems),
            }
        )
        for link in art.links:
            if link.target in known:
                edges.append(
                    {"source": "a:" + address, "target": "a:" + link.target, "kind": "link"}
                )
            else:
                missing.add(link.target)
                edges.append(
                    {"source": "a:" + address, "target": "m:" + link.target, "kind": "broken"}
                )
        ancestor = _governing_ancestor(store, address)
        if ancestor:
            edges.append({"source": "a:" + address, "target": "a:" + ancestor, "kind": "parent"})
        if with_assets and ":" not in address:
            for rel in project_assets.of(address):
                nodes.append({"id": "f:" + rel, "kind": "asset", "label": rel})
                edges.append({"source": "a:" + address, "target": "f:" + rel, "kind": "asset"})
    for target in sorted(missing):
        nodes.append({"id": "m:" + target, "kind": "missing", "label": target})
    for entry in store.journal_entries():
        nodes.append(
            {
                "id": "j:" + entry.name,
                "kind": "journal",
                "label": entry.name,
                "date": entry.date,
                "subject": list(entry.subject),
                "source": entry.source,
            }
        )
        for subject in entry.subject:
            governing = store.governing(subject)
            if governing:
                edges.append(
                    {"source": "j:" + entry.name, "target": "a:" + governing, "kind": "subject"}
                )
    return {
        "nodes": _unique(nodes),
        "edges": edges,
        "root": str(store.root),
        "assets_omitted": not with_assets,
    }


def _governing_ancestor(store: Store, address: str) -> str | None:
    if "/" not in address:
        return None
    return store.governing(address.rsplit("/", 1)[0])


def _unique(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for node in nodes:
        if node["id"] not in seen:
            seen.add(node["id"])
            out.append(node)
    return out


def _json_for_script(data: object) -> str:
    """JSON that cannot close its <script> element or start markup."""
    text = json.dumps(data, ensure_ascii=False)
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, safe)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _index_html(data: dict[str, Any]) -> str:
    """Plain tables under the drawing: readable without script, every value escaped."""
    e = html.escape
    rows = [
        f'<tr class="{e(n["status"])}"><td>{e(n["label"])}</td><td>{e(n["capsule"])}</td>'
        f"<td>{e(n['updated'])}</td><td>{e(n['status'])}{' (rule)' if n['scope'] == 'rule' else ''}"
        f"</td></tr>"
        for n in data["nodes"]
        if n["kind"] == "article"
    ]
    entries = [
        f"<tr><td>{e(n['label'])}</td><td>{e(', '.join(n['subject']))}</td>"
        f"<td>{e(n['source'])}</td></tr>"
        for n in data["nodes"]
        if n["kind"] == "journal"
    ]
    broken = [f"<li>{e(n['label'])}</li>" for n in data["nodes"] if n["kind"] == "missing"]
    parts = [
        "<h2>Articles</h2><table><tr><th>address</th><th>capsule</th><th>updated</th>"
        "<th>status</th></tr>" + "".join(rows) + "</table>",
        "<h2>Journal</h2><table><tr><th>entry</th><th>subject</th><th>source</th></tr>"
        + "".join(entries)
        + "</table>",
    ]
    if broken:
        parts.append("<h2>Broken link targets</h2><ul>" + "".join(broken) + "</ul>")
    return "\n".join(parts)


def render(store: Store) -> str:
    """The whole page as one string."""
    data = graph_data(store)
    counts = {k: sum(1 for n in data["nodes"] if n["kind"] == k) for k in ("article", "journal")}
    title = html.escape(f"canon graph: {data['root']}")
    summary = html.escape(
        f"{counts['article']} articles, {counts['journal']} journal entries, "
        f"{len(data['edges'])} edges"
        + (
            f" (asset nodes left out above {ASSET_NODE_LIMIT} articles)"
            if data.get("assets_omitted")
            else ""
        )
    )
    fills = {
        "TITLE": title,
        "SUMMARY": summary,
        "INDEX": _index_html(data),
        "DATA": _json_for_script(data),
    }
    # One pass, so store text that happens to contain a placeholder is never expanded.
    return re.sub(r"@@([A-Z]+)@@", lambda m: fills[m.group(1)], _PAGE)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>@@TITLE@@</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;color:#222}
header{padding:8px 12px;border-bottom:1px solid #ddd}
#wrap{display:flex;height:70vh}
svg{flex:1;background:#fafafa;cursor:grab}
#info{width:320px;padding:8px 12px;overflow:auto;border-left:1px solid #ddd;white-space:pre-wrap}
.legend span{margin-right:12px}
svg.far text{display:none}
main{padding:0 12px}
table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #ddd;padding:2px 6px;
text-align:left;vertical-align:top}
tr.stale td:last-child{color:#b60}tr.orphan td:last-child{color:#a0a}
</style></head><body>
<header><strong>@@TITLE@@</strong> &middot; @@SUMMARY@@
<span class="legend"> &middot; <span style="color:#2b6cb0">&#9679; article</span>
<span style="color:#b60">&#9679; stale</span><span style="color:#a0a">&#9679; orphan</span>
<span style="color:#2f855a">&#9670; journal</span><span style="color:#999">&#9679; asset</span>
<span style="color:#c53030">&#9675; missing link target</span></span></header>
<div id="wrap"><svg id="g" xmlns="http://www.w3.org/2000/svg"></svg>
<div id="info">Click a node.</div></div>
<main>@@INDEX@@</main>
<script type="application/json" id="canon-data">@@DATA@@</script>
<script>
(function(){
"use strict";
var data=JSON.parse(document.getElementById("canon-data").textContent);
var svg=document.getElementById("g"),info=document.getElementById("info");
var NS="http://www.w3.org/2000/svg",W=svg.clientWidth||900,H=svg.clientHeight||600;
var byId={},nodes=data.nodes,edges=[],K=40;
nodes.forEach(function(n){byId[n.id]=n;n.vx=0;n.vy=0;n.placed=false;});
data.edges.forEach(function(e){if(byId[e.source]&&byId[e.target])edges.push(e);});
// Start from a spiral in address order (siblings start side by side), then put every other
// node next to an article it is connected to, so the layout has little left to untangle.
var spiral=0;
function onSpiral(n){var t=Math.sqrt(4*Math.PI*spiral++),r=K*t/(2*Math.PI);
 n.x=r*Math.cos(t);n.y=r*Math.sin(t);n.placed=true;}
nodes.forEach(function(n){if(n.kind==="article")onSpiral(n);});
edges.forEach(function(e,i){var a=byId[e.source],b=byId[e.target],o=a.placed?b:a,p=a.placed?a:b;
 if(!o.placed&&p.placed){o.x=p.x+Math.cos(i)*K/2;o.y=p.y+Math.sin(i)*K/2;o.placed=true;}});
nodes.forEach(function(n){if(!n.placed)onSpiral(n);});
var color={article:"#2b6cb0",journal:"#2f855a",asset:"#999",missing:"#c53030"};
var status={stale:"#b60",orphan:"#a0a"};
var view=document.createElementNS(NS,"g");svg.appendChild(view);
var lines=edges.map(function(e){var l=document.createElementNS(NS,"line");
 l.setAttribute("stroke",e.kind==="broken"?"#c53030":e.kind==="parent"?"#bbb":"#999");
 if(e.kind==="broken"||e.kind==="parent")l.setAttribute("stroke-dasharray","4 3");
 view.appendChild(l);return l;});
var dots=nodes.map(function(n){var g=document.createElementNS(NS,"g");
 var c=document.createElementNS(NS,n.kind==="journal"?"rect":"circle");
 var fill=(n.kind==="article"&&status[n.status])||color[n.kind];
 if(n.kind==="journal"){c.setAttribute("width",9);c.setAttribute("height",9);
  c.setAttribute("x",-4.5);c.setAttribute("y",-4.5);c.setAttribute("transform","rotate(45)");}
 else c.setAttribute("r",n.kind==="article"?7:4);
 c.setAttribute("fill",n.kind==="missing"?"#fff":fill);c.setAttribute("stroke",fill);
 var t=document.createElementNS(NS,"text");t.setAttribute("x",9);t.setAttribute("y",4);
 t.setAttribute("font-size",n.kind==="article"?"11":"9");t.textContent=n.label;
 var tip=document.createElementNS(NS,"title");tip.textContent=n.capsule||n.label;
 g.appendChild(c);g.appendChild(t);g.appendChild(tip);view.appendChild(g);
 g.addEventListener("click",function(ev){ev.stopPropagation();show(n);});return g;});
function show(n){var out=[n.kind+": "+n.label];
 if(n.capsule!==undefined)out.push("capsule: "+n.capsule,"updated: "+n.updated,
  "status: "+n.status+(n.scope==="rule"?" (rule)":""));
 if(n.note)out.push(n.note);
 if(n.problems&&n.problems.length)out.push("problems: "+n.problems.join("; "));
 if(n.date)out.push("date: "+n.date,"subject: "+n.subject.join(", "),"source: "+n.source);
 edges.forEach(function(e){if(e.source===n.id)out.push("-> "+e.kind+" "+byId[e.target].label);
  if(e.target===n.id)out.push("<- "+e.kind+" "+byId[e.source].label);});
 info.textContent=out.join("\\n");}
var steps=0,max=nodes.length>5000?60:300,temp=3*K,moved=false,scale=1,tx=0,ty=0,drag=null;
var ends=edges.map(function(e){return [byId[e.source],byId[e.target]];});
function tick(){var cell=2*K,grid=new Map(),a,b,dx,dy,d,f,i,j,x,y,list,n,ex,ey;
 for(i=0;i<nodes.length;i++){a=nodes[i];a.vx=0;a.vy=0;
  a.key=(Math.floor(a.x/cell)+32768)*65536+Math.floor(a.y/cell)+32768;
  list=grid.get(a.key);if(list)list.push(a);else grid.set(a.key,[a]);}
 // Repulsion from near neighbours only (a 3x3 block of cells, at most 16 per cell): linear cost.
 for(i=0;i<nodes.length;i++){a=nodes[i];
  for(dx=-1;dx<=1;dx++)for(dy=-1;dy<=1;dy++){list=grid.get(a.key+dx*65536+dy);if(!list)continue;
   for(j=0,n=Math.min(16,list.length);j<n;j++){b=list[j];if(b===a)continue;ex=a.x-b.x;ey=a.y-b.y;
    d=Math.max(0.01,ex*ex+ey*ey);if(d<cell*cell){f=K*K/d;a.vx+=ex*f;a.vy+=ey*f;}}}}
 for(i=0;i<ends.length;i++){a=ends[i][0];b=ends[i][1];dx=a.x-b.x;dy=a.y-b.y;
  d=Math.sqrt(dx*dx+dy*dy)||0.01;f=Math.max(0,d-K)/d*0.1;a.vx-=dx*f;a.vy-=dy*f;b.vx+=dx*f;b.vy+=dy*f;}
 for(i=0;i<nodes.length;i++){a=nodes[i];a.vx-=a.x*0.01;a.vy-=a.y*0.01;
  d=Math.sqrt(a.vx*a.vx+a.vy*a.vy)||1;f=Math.min(d,temp)/d;a.x+=a.vx*f;a.y+=a.vy*f;}
 temp=Math.max(0.5,temp*0.985);}
function fit(){if(moved||!nodes.length)return;var x0=1e9,y0=1e9,x1=-1e9,y1=-1e9;
 nodes.forEach(function(p){x0=Math.min(x0,p.x);y0=Math.min(y0,p.y);
  x1=Math.max(x1,p.x+120);y1=Math.max(y1,p.y);});
 scale=Math.min(2,(W-40)/Math.max(1,x1-x0),(H-40)/Math.max(1,y1-y0));
 tx=20-x0*scale+((W-40)-(x1-x0)*scale)/2;ty=20-y0*scale+((H-40)-(y1-y0)*scale)/2;apply();}
function draw(){edges.forEach(function(e,i){var a=byId[e.source],b=byId[e.target];
  lines[i].setAttribute("x1",a.x);lines[i].setAttribute("y1",a.y);
  lines[i].setAttribute("x2",b.x);lines[i].setAttribute("y2",b.y);});
 nodes.forEach(function(p,i){dots[i].setAttribute("transform","translate("+p.x+","+p.y+")");});
 fit();}
// Small graphs animate; big ones (thousands of SVG elements) are drawn once, when laid out.
var animate=nodes.length<=2000;
function frame(){var t0=Date.now();
 do{tick();steps++;}while(steps<max&&Date.now()-t0<(animate?30:200));
 if(animate||steps>=max)draw();
 if(steps<max)window.setTimeout(frame,0);}
function apply(){view.setAttribute("transform","translate("+tx+","+ty+") scale("+scale+")");
 svg.setAttribute("class",scale<0.6?"far":"");}
svg.addEventListener("wheel",function(ev){ev.preventDefault();moved=true;
 scale*=ev.deltaY<0?1.1:1/1.1;apply();});
svg.addEventListener("mousedown",function(ev){moved=true;drag=[ev.clientX-tx,ev.clientY-ty];});
window.addEventListener("mouseup",function(){drag=null;});
window.addEventListener("mousemove",function(ev){if(drag){tx=ev.clientX-drag[0];
 ty=ev.clientY-drag[1];apply();}});
frame();
})();
</script></body></html>
"""
