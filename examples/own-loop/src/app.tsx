import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, type UIMessage } from 'ai';
import type { CadreRunPartData } from 'cadre';
import { useState } from 'react';
import { RunCard } from './run-card.tsx';

/** The page's messages: cadre's runs arrive as `data-cadre-run` parts. */
export type ChatMessage = UIMessage<never, { 'cadre-run': CadreRunPartData }>;

/** The chat's id lives in the address (`#id`), so a reload comes back to the same chat and its runs. */
function chatId(): string {
  if (location.hash.length > 1) return location.hash.slice(1);
  const id = crypto.randomUUID();
  history.replaceState(null, '', `#${id}`);
  return id;
}

export function App() {
  const [id] = useState(chatId);
  // Every status a run's card went through, in order (parts replace each other in the message).
  const [trails, setTrails] = useState<Record<string, string[]>>({});
  const { messages, sendMessage, status } = useChat<ChatMessage>({
    id,
    // After a reload, GET /api/chat/:id/stream brings back the cards of runs still going.
    resume: true,
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    onData: (part) => {
      if (part.type !== 'data-cadre-run' || !part.id) return;
      const { id, data } = part;
      setTrails((current) => (current[id]?.at(-1) === data.status ? current : { ...current, [id]: [...(current[id] ?? []), data.status] }));
    },
  });
  const [input, setInput] = useState('');

  return (
    <main>
      <h1>Your loop, cadre's subagents</h1>
      <ol className="messages">
        {messages.map((message) => (
          <li key={message.id} className={`message ${message.role}`}>
            {message.parts.map((part, index) => {
              if (part.type === 'text') return <p key={index}>{part.text}</p>;
              if (part.type === 'data-cadre-run') return <RunCard key={part.id} id={part.id!} run={part.data} trail={trails[part.id!] ?? []} />;
              return null;
            })}
          </li>
        ))}
      </ol>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (input.trim() === '') return;
          sendMessage({ text: input });
          setInput('');
        }}
      >
        <input name="prompt" value={input} onChange={(event) => setInput(event.target.value)} placeholder="Ask for something that takes a few subagents" />
        <button type="submit" disabled={status === 'submitted' || status === 'streaming'}>
          Send
        </button>
      </form>
    </main>
  );
}
