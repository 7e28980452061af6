"use strict";(self.rspackChunkansor_lab=self.rspackChunkansor_lab||[]).push([[700],{646(a,o,l){var t=l(601),e=l.n(t),r=l(314),n=(l.n(r))()(e());n.push([a.id,`/* ansor_lab's outputs and tuning-log viewer (JupyterLab theme variables throughout); every
   rule is scoped to our renderers, so the HTML fallbacks (which share class names) keep
   their own inline styles */
.al-output, .al-logpanel { font-family: var(--jp-ui-font-family); font-size: 12px; color: var(--jp-ui-font-color1); }
.al-logpanel { overflow: auto; padding: 8px 12px; background: var(--jp-layout-color0); }
:is(.al-output, .al-logpanel) .al-caption { font-size: 13px; margin: 2px 0 6px; color: var(--jp-ui-font-color1); }
:is(.al-output, .al-logpanel) .al-log-caption { font-weight: 600; }
:is(.al-output, .al-logpanel) .al-subtitle { font-weight: 600; margin: 8px 0 2px; color: var(--jp-ui-font-color2); }
:is(.al-output, .al-logpanel) .al-code { font-family: var(--jp-code-font-family); font-size: 12px; line-height: 1.35; margin: 0; padding: 6px 8px;
  max-height: 34em; overflow: auto; border: 1px solid var(--jp-border-color2); border-radius: 4px;
  background: var(--jp-cell-editor-background, #f8f9fa); white-space: pre; }
:is(.al-output, .al-logpanel) .al-tok-kw { color: #008000; font-weight: bold; }
:is(.al-output, .al-logpanel) .al-tok-num { color: #666666; }
:is(.al-output, .al-logpanel) .al-tok-str { color: #ba2121; }
:is(.al-output, .al-logpanel) .al-tok-com { color: #3d7b7b; font-style: italic; }
:is(.al-output, .al-logpanel) .al-tok-fn { color: #0000ff; }
:is(.al-output, .al-logpanel) .al-tok-dec { color: #aa22ff; }
:is(.al-output, .al-logpanel) .al-params { font-family: var(--jp-code-font-family); color: var(--jp-ui-font-color2); margin-bottom: 4px; }
:is(.al-output, .al-logpanel) .al-loops { font-family: var(--jp-code-font-family); white-space: pre; border-left: 3px solid #adb5bd; padding-left: 6px; }
:is(.al-output, .al-logpanel) .al-loop-parallel { color: #e8590c; }
:is(.al-output, .al-logpanel) .al-loop-vectorized { color: #2f9e44; }
:is(.al-output, .al-logpanel) .al-loop-unrolled { color: #9c36b5; }
:is(.al-output, .al-logpanel) .al-loop-thread_binding { color: #1c7ed6; }
:is(.al-output, .al-logpanel) .al-tabbar { display: flex; gap: 2px; }
:is(.al-output, .al-logpanel) .al-tab { border: 1px solid var(--jp-border-color2); border-bottom: none; border-radius: 4px 4px 0 0;
  background: var(--jp-layout-color2); padding: 2px 10px; cursor: pointer; font-size: 12px; color: var(--jp-ui-font-color1); }
:is(.al-output, .al-logpanel) .al-tab.al-active { background: var(--jp-layout-color0); font-weight: 600; }
:is(.al-output, .al-logpanel) .al-chart { max-width: 100%; height: auto; }
:is(.al-output, .al-logpanel) .al-chart .al-grid { stroke: var(--jp-border-color2); stroke-width: 1; }
:is(.al-output, .al-logpanel) .al-chart .al-tick, :is(.al-output, .al-logpanel) .al-chart .al-axis-title { font-size: 10px; fill: var(--jp-ui-font-color2); }
:is(.al-output, .al-logpanel) .al-chart .al-point { cursor: pointer; }
:is(.al-output, .al-logpanel) .al-chart .al-point.al-selected { stroke: #000; stroke-width: 1.5; }
:is(.al-output, .al-logpanel) .al-legend { display: flex; flex-wrap: wrap; gap: 12px; margin: 2px 0 8px 52px; }
:is(.al-output, .al-logpanel) .al-swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
:is(.al-output, .al-logpanel) .al-legend-name { font-family: var(--jp-code-font-family); }
:is(.al-output, .al-logpanel) .al-legend-best { color: var(--jp-ui-font-color2); }
:is(.al-output, .al-logpanel) .al-panes { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
:is(.al-output, .al-logpanel) .al-table-box { flex: 1 1 560px; max-height: 28em; overflow: auto; border: 1px solid var(--jp-border-color2); }
:is(.al-output, .al-logpanel) .al-detail { flex: 1 1 420px; min-width: 0; }
:is(.al-output, .al-logpanel) .al-records { border-collapse: collapse; width: 100%; }
:is(.al-output, .al-logpanel) .al-records th { position: sticky; top: 0; background: var(--jp-layout-color2); padding: 3px 8px; text-align: right;
  cursor: pointer; white-space: nowrap; user-select: none; border-bottom: 2px solid var(--jp-border-color1); }
:is(.al-output, .al-logpanel) .al-records td { padding: 2px 8px; text-align: right; border-bottom: 1px solid var(--jp-border-color3); white-space: nowrap; }
:is(.al-output, .al-logpanel) .al-records td.al-col-workload, :is(.al-output, .al-logpanel) .al-records td.al-col-error { text-align: left; font-family: var(--jp-code-font-family); }
:is(.al-output, .al-logpanel) .al-records tr.al-row { cursor: pointer; }
:is(.al-output, .al-logpanel) .al-records tr.al-row:hover { background: var(--jp-layout-color2); }
:is(.al-output, .al-logpanel) .al-records tr.al-selected { background: #d0ebff; }
:is(.al-output, .al-logpanel) .al-records tr.al-failed td.al-col-error { color: #e03131; }
:is(.al-output, .al-logpanel) .al-kv td { padding: 1px 10px 1px 0; vertical-align: top; }
:is(.al-output, .al-logpanel) .al-kv td.al-k { color: var(--jp-ui-font-color2); }
:is(.al-output, .al-logpanel) .al-kv td.al-v { font-family: var(--jp-code-font-family); word-break: break-all; }
:is(.al-output, .al-logpanel) .al-error-msg { color: #c92a2a; white-space: pre-wrap; max-height: 12em; overflow: auto; margin: 0;
  font-family: var(--jp-code-font-family); background: #fff5f5; padding: 4px 6px; border-radius: 4px; }
:is(.al-output, .al-logpanel) .al-empty, :is(.al-output, .al-logpanel) .al-note { color: var(--jp-ui-font-color2); margin: 6px 0; }
`,""]),l.d(o,{},{A:n})},314(a){a.exports=function(a){var o=[];return o.toString=function(){return this.map(function(o){var l="",t=void 0!==o[5];return o[4]&&(l+="@supports (".concat(o[4],") {")),o[2]&&(l+="@media ".concat(o[2]," {")),t&&(l+="@layer".concat(o[5].length>0?" ".concat(o[5]):""," {")),l+=a(o),t&&(l+="}"),o[2]&&(l+="}"),o[4]&&(l+="}"),l}).join("")},o.i=function(a,l,t,e,r){"string"==typeof a&&(a=[[null,a,void 0]]);var n={};if(t)for(var p=0;p<this.length;p++){var i=this[p][0];null!=i&&(n[i]=!0)}for(var u=0;u<a.length;u++){var s=[].concat(a[u]);t&&n[s[0]]||(void 0!==r&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=r),l&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=l),e&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=e):s[4]="".concat(e)),o.push(s))}},o}},601(a){a.exports=function(a){return a[1]}},72(a){var o=[];function l(a){for(var l=-1,t=0;t<o.length;t++)if(o[t].identifier===a){l=t;break}return l}function t(a,t){for(var e={},r=[],n=0;n<a.length;n++){var p=a[n],i=t.base?p[0]+t.base:p[0],u=e[i]||0,s="".concat(i," ").concat(u);e[i]=u+1;var c=l(s),d={css:p[1],media:p[2],sourceMap:p[3],supports:p[4],layer:p[5]};if(-1!==c)o[c].references++,o[c].updater(d);else{var f=function(a,o){var l=o.domAPI(o);return l.update(a),function(o){o?(o.css!==a.css||o.media!==a.media||o.sourceMap!==a.sourceMap||o.supports!==a.supports||o.layer!==a.layer)&&l.update(a=o):l.remove()}}(d,t);t.byIndex=n,o.splice(n,0,{identifier:s,updater:f,references:1})}r.push(s)}return r}a.exports=function(a,e){var r=t(a=a||[],e=e||{});return function(a){a=a||[];for(var n=0;n<r.length;n++){var p=l(r[n]);o[p].references--}for(var i=t(a,e),u=0;u<r.length;u++){var s=l(r[u]);0===o[s].references&&(o[s].updater(),o.splice(s,1))}r=i}}},659(a){var o={};a.exports=function(a,l){var t=function(a){if(void 0===o[a]){var l=document.querySelector(a);if(window.HTMLIFrameElement&&l instanceof window.HTMLIFrameElement)try{l=l.contentDocument.head}catch(a){l=null}o[a]=l}return o[a]}(a);if(!t)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");t.appendChild(l)}},540(a){a.exports=function(a){var o=document.createElement("style");return a.setAttributes(o,a.attributes),a.insert(o,a.options),o}},56(a,o,l){a.exports=function(a){var o=l.nc;o&&a.setAttribute("nonce",o)}},825(a){a.exports=function(a){if("u"<typeof document)return{update:function(){},remove:function(){}};var o=a.insertStyleElement(a);return{update:function(l){var t,e,r;t="",l.supports&&(t+="@supports (".concat(l.supports,") {")),l.media&&(t+="@media ".concat(l.media," {")),(e=void 0!==l.layer)&&(t+="@layer".concat(l.layer.length>0?" ".concat(l.layer):""," {")),t+=l.css,e&&(t+="}"),l.media&&(t+="}"),l.supports&&(t+="}"),(r=l.sourceMap)&&"u">typeof btoa&&(t+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(r))))," */")),a.styleTagTransform(t,o,a.options)},remove:function(){var a;null===(a=o).parentNode||a.parentNode.removeChild(a)}}}},113(a){a.exports=function(a,o){if(o.styleSheet)o.styleSheet.cssText=a;else{for(;o.firstChild;)o.removeChild(o.firstChild);o.appendChild(document.createTextNode(a))}}},959(a,o,l){var t=l(72),e=l.n(t),r=l(825),n=l.n(r),p=l(659),i=l.n(p),u=l(56),s=l.n(u),c=l(540),d=l.n(c),f=l(113),g=l.n(f),v=l(646),h={};h.styleTagTransform=g(),h.setAttributes=s(),h.insert=i().bind(null,"head"),h.domAPI=n(),h.insertStyleElement=d(),e()(v.A,h),v.A&&v.A.locals&&v.A.locals}}]);