"use strict";(self.rspackChunkansor_lab=self.rspackChunkansor_lab||[]).push([[700],{646(o,r,a){var e=a(601),t=a.n(e),l=a(314),n=(a.n(l))()(t());n.push([o.id,`/* ansor_lab's outputs and tuning-log viewer (JupyterLab theme variables throughout) */
.al-output, .al-logpanel { font-family: var(--jp-ui-font-family); font-size: 12px; color: var(--jp-ui-font-color1); }
.al-logpanel { overflow: auto; padding: 8px 12px; background: var(--jp-layout-color0); }
.al-caption { font-size: 13px; margin: 2px 0 6px; color: var(--jp-ui-font-color1); }
.al-log-caption { font-weight: 600; }
.al-subtitle { font-weight: 600; margin: 8px 0 2px; color: var(--jp-ui-font-color2); }
.al-code { font-family: var(--jp-code-font-family); font-size: 12px; line-height: 1.35; margin: 0; padding: 6px 8px;
  max-height: 34em; overflow: auto; border: 1px solid var(--jp-border-color2); border-radius: 4px;
  background: var(--jp-cell-editor-background, #f8f9fa); white-space: pre; }
.al-tok-kw { color: #008000; font-weight: bold; }
.al-tok-num { color: #666666; }
.al-tok-str { color: #ba2121; }
.al-tok-com { color: #3d7b7b; font-style: italic; }
.al-tok-fn { color: #0000ff; }
.al-tok-dec { color: #aa22ff; }
.al-params { font-family: var(--jp-code-font-family); color: var(--jp-ui-font-color2); margin-bottom: 4px; }
.al-loops { font-family: var(--jp-code-font-family); white-space: pre; border-left: 3px solid #adb5bd; padding-left: 6px; }
.al-loop-parallel { color: #e8590c; }
.al-loop-vectorized { color: #2f9e44; }
.al-loop-unrolled { color: #9c36b5; }
.al-loop-thread_binding { color: #1c7ed6; }
.al-tabbar { display: flex; gap: 2px; }
.al-tab { border: 1px solid var(--jp-border-color2); border-bottom: none; border-radius: 4px 4px 0 0;
  background: var(--jp-layout-color2); padding: 2px 10px; cursor: pointer; font-size: 12px; color: var(--jp-ui-font-color1); }
.al-tab.al-active { background: var(--jp-layout-color0); font-weight: 600; }
.al-chart { max-width: 100%; height: auto; }
.al-chart .al-grid { stroke: var(--jp-border-color2); stroke-width: 1; }
.al-chart .al-tick, .al-chart .al-axis-title { font-size: 10px; fill: var(--jp-ui-font-color2); }
.al-chart .al-point { cursor: pointer; }
.al-chart .al-point.al-selected { stroke: #000; stroke-width: 1.5; }
.al-legend { display: flex; flex-wrap: wrap; gap: 12px; margin: 2px 0 8px 52px; }
.al-swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
.al-legend-name { font-family: var(--jp-code-font-family); }
.al-legend-best { color: var(--jp-ui-font-color2); }
.al-panes { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.al-table-box { flex: 1 1 560px; max-height: 28em; overflow: auto; border: 1px solid var(--jp-border-color2); }
.al-detail { flex: 1 1 420px; min-width: 0; }
.al-records { border-collapse: collapse; width: 100%; }
.al-records th { position: sticky; top: 0; background: var(--jp-layout-color2); padding: 3px 8px; text-align: right;
  cursor: pointer; white-space: nowrap; user-select: none; border-bottom: 2px solid var(--jp-border-color1); }
.al-records td { padding: 2px 8px; text-align: right; border-bottom: 1px solid var(--jp-border-color3); white-space: nowrap; }
.al-records td.al-col-workload, .al-records td.al-col-error { text-align: left; font-family: var(--jp-code-font-family); }
.al-records tr.al-row { cursor: pointer; }
.al-records tr.al-row:hover { background: var(--jp-layout-color2); }
.al-records tr.al-selected { background: #d0ebff; }
.al-records tr.al-failed td.al-col-error { color: #e03131; }
.al-kv td { padding: 1px 10px 1px 0; vertical-align: top; }
.al-kv td.al-k { color: var(--jp-ui-font-color2); }
.al-kv td.al-v { font-family: var(--jp-code-font-family); word-break: break-all; }
.al-error-msg { color: #c92a2a; white-space: pre-wrap; max-height: 12em; overflow: auto; margin: 0;
  font-family: var(--jp-code-font-family); background: #fff5f5; padding: 4px 6px; border-radius: 4px; }
.al-empty, .al-note { color: var(--jp-ui-font-color2); margin: 6px 0; }
`,""]),a.d(r,{},{A:n})},314(o){o.exports=function(o){var r=[];return r.toString=function(){return this.map(function(r){var a="",e=void 0!==r[5];return r[4]&&(a+="@supports (".concat(r[4],") {")),r[2]&&(a+="@media ".concat(r[2]," {")),e&&(a+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),a+=o(r),e&&(a+="}"),r[2]&&(a+="}"),r[4]&&(a+="}"),a}).join("")},r.i=function(o,a,e,t,l){"string"==typeof o&&(o=[[null,o,void 0]]);var n={};if(e)for(var i=0;i<this.length;i++){var c=this[i][0];null!=c&&(n[c]=!0)}for(var p=0;p<o.length;p++){var s=[].concat(o[p]);e&&n[s[0]]||(void 0!==l&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=l),a&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=a),t&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=t):s[4]="".concat(t)),r.push(s))}},r}},601(o){o.exports=function(o){return o[1]}},72(o){var r=[];function a(o){for(var a=-1,e=0;e<r.length;e++)if(r[e].identifier===o){a=e;break}return a}function e(o,e){for(var t={},l=[],n=0;n<o.length;n++){var i=o[n],c=e.base?i[0]+e.base:i[0],p=t[c]||0,s="".concat(c," ").concat(p);t[c]=p+1;var d=a(s),f={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==d)r[d].references++,r[d].updater(f);else{var u=function(o,r){var a=r.domAPI(r);return a.update(o),function(r){r?(r.css!==o.css||r.media!==o.media||r.sourceMap!==o.sourceMap||r.supports!==o.supports||r.layer!==o.layer)&&a.update(o=r):a.remove()}}(f,e);e.byIndex=n,r.splice(n,0,{identifier:s,updater:u,references:1})}l.push(s)}return l}o.exports=function(o,t){var l=e(o=o||[],t=t||{});return function(o){o=o||[];for(var n=0;n<l.length;n++){var i=a(l[n]);r[i].references--}for(var c=e(o,t),p=0;p<l.length;p++){var s=a(l[p]);0===r[s].references&&(r[s].updater(),r.splice(s,1))}l=c}}},659(o){var r={};o.exports=function(o,a){var e=function(o){if(void 0===r[o]){var a=document.querySelector(o);if(window.HTMLIFrameElement&&a instanceof window.HTMLIFrameElement)try{a=a.contentDocument.head}catch(o){a=null}r[o]=a}return r[o]}(o);if(!e)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");e.appendChild(a)}},540(o){o.exports=function(o){var r=document.createElement("style");return o.setAttributes(r,o.attributes),o.insert(r,o.options),r}},56(o,r,a){o.exports=function(o){var r=a.nc;r&&o.setAttribute("nonce",r)}},825(o){o.exports=function(o){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=o.insertStyleElement(o);return{update:function(a){var e,t,l;e="",a.supports&&(e+="@supports (".concat(a.supports,") {")),a.media&&(e+="@media ".concat(a.media," {")),(t=void 0!==a.layer)&&(e+="@layer".concat(a.layer.length>0?" ".concat(a.layer):""," {")),e+=a.css,t&&(e+="}"),a.media&&(e+="}"),a.supports&&(e+="}"),(l=a.sourceMap)&&"u">typeof btoa&&(e+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(l))))," */")),o.styleTagTransform(e,r,o.options)},remove:function(){var o;null===(o=r).parentNode||o.parentNode.removeChild(o)}}}},113(o){o.exports=function(o,r){if(r.styleSheet)r.styleSheet.cssText=o;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(o))}}},959(o,r,a){var e=a(72),t=a.n(e),l=a(825),n=a.n(l),i=a(659),c=a.n(i),p=a(56),s=a.n(p),d=a(540),f=a.n(d),u=a(113),v=a.n(u),m=a(646),h={};h.styleTagTransform=v(),h.setAttributes=s(),h.insert=c().bind(null,"head"),h.domAPI=n(),h.insertStyleElement=f(),t()(m.A,h),m.A&&m.A.locals&&m.A.locals}}]);