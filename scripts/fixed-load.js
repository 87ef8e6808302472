// The load of scripts/fixed-load: one VU runs CLIENTS native chat clients, each
// chatting RATE times a second for SECONDS, then leaving.
import chat from 'k6/x/chat';

export const options = { vus: 1, iterations: 1 };

export default function () {
  const seconds = Number(__ENV.SECONDS || 10);
  const start = Date.now();
  chat.session({
    url: __ENV.WS_URL,
    user: 'fixed',
    clients: Number(__ENV.CLIENTS || 200),
    chatsPerSecond: Number(__ENV.RATE || 2),
    stopChatAt: start + seconds * 1000,
    leaveAt: start + seconds * 1000 + 1500,
  });
}

export function handleSummary() {
  return {};
}
