// The marks are read by tests/perf/startup.mjs: where the window's start goes.
performance.mark("pinloom-script");
import { mount } from "svelte";

import App from "./App.svelte";
import "./styles.css";

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");

const app = mount(App, { target });
performance.mark("pinloom-mounted");
export default app;
