// Owns what k6 writes at the end of a run: the full summary `data` as JSON at
// SUMMARY_PATH and the native report (k6/x/chat's report(): exact counts, the
// latency histogram, k6's CPU time) at NATIVE_PATH for the orchestrator, and
// one short paragraph on stdout for a person watching. The native report is
// written on both load paths: its process_cpu_ns is the js path's cost too.
import chat from 'k6/x/chat';
import { config } from './config.js';

function count(data, name) {
  const metric = data.metrics[name];
  return metric ? metric.values.count : 0;
}

function ms(data, stat) {
  const metric = data.metrics.chat_latency;
  return metric ? `${metric.values[stat].toFixed(2)} ms` : 'n/a';
}

function failedThresholds(data) {
  const failed = [];
  for (const [name, metric] of Object.entries(data.metrics)) {
    for (const [source, result] of Object.entries(metric.thresholds || {})) {
      if (!result.ok) failed.push(`${name} ${source}`);
    }
  }
  return failed;
}

// Frames k6 received per second of its CPU time, from ws_msgs_received, which
// both load paths record.
function perCpuSecond(data, report) {
  const cpuSeconds = report.process_cpu_ns / 1e9;
  return cpuSeconds > 0 ? Math.round(count(data, 'ws_msgs_received') / cpuSeconds) : 0;
}

function paragraph(scenario, data, report) {
  const seconds = data.state.testRunDurationMs / 1000;
  const received = count(data, 'chat_received');
  const cutOff = count(data, 'ws_sessions') - count(data, 'sessions_closed');
  const failed = failedThresholds(data);
  return (
    `${scenario} (${config.mode}, ${config.loadgen} load path) against ${config.wsUrl} in ${seconds.toFixed(1)} s: ` +
    `${count(data, 'ws_sessions')} sessions, ${count(data, 'chat_sent')} chats sent, ` +
    `${received} received (${Math.round(received / seconds)}/s); ` +
    `chat latency p50 ${ms(data, 'p(50)')}, p95 ${ms(data, 'p(95)')}, p99 ${ms(data, 'p(99)')}, max ${ms(data, 'max')}; ` +
    `${count(data, 'connect_errors')} connect errors, ${count(data, 'abnormal_closes')} abnormal closes, ` +
    `${count(data, 'ws_errors')} ws errors, ${cutOff} sessions cut off by k6; ` +
    `k6 used ${(report.process_cpu_ns / 1e9).toFixed(2)} CPU-s, ${perCpuSecond(data, report)} frames received per CPU-s; ` +
    `thresholds ${failed.length === 0 ? 'ok' : `failed: ${failed.join(', ')}`}. ` +
    slowSentence(report.slow) +
    `Summary JSON: ${config.summaryPath}, native report: ${config.nativePath}\n`
  );
}

// The slow readers (slow-consumers), counted apart from everything above.
function slowSentence(slow) {
  if (!slow) return '';
  const first = slow.closed_at_ms.length > 0 ? `, the first ${(slow.closed_at_ms[0] / 1000).toFixed(1)} s in` : '';
  return (
    `Slow readers: ${slow.clients}, paused ${(slow.read_paused_ms / 1000).toFixed(1)} s, received ${slow.received}, ` +
    `${slow.closed_by_server} closed by the server${first}, ${slow.errors} errors. `
  );
}

/** The handleSummary export of the script that runs scenario `scenario`. */
export function summaryFor(scenario) {
  return (data) => {
    const report = chat.report();
    return {
      [config.summaryPath]: JSON.stringify(data),
      [config.nativePath]: JSON.stringify(report),
      stdout: paragraph(scenario, data, report),
    };
  };
}
