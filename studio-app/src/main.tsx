/** The studio's page: a header, and the view the address names. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { Catalog } from './catalog.js';
import { ConfirmHost } from './confirm.js';
import { ErrorNote } from './notes.js';
import { Link, useRoute } from './router.js';
import { SessionView } from './session.js';
import { Scope, Scopes } from './state.js';
import type { StudioInfo } from './wire.js';
import './style.css';

function App() {
  const route = useRoute();
  const [studio, setStudio] = useState<StudioInfo | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api.studio().then(setStudio, setError);
  }, []);
  // The views start at once; the buttons of the changes show once the studio says they are allowed.
  const write = studio?.write === true;
  return (
    <>
      <header class="top">
        <Link href="/" class="brand">
          ckpt studio
        </Link>
        <nav>
          <Link href="/" class={route.view === 'catalog' || route.view === 'session' ? 'here' : ''}>
            Sessions
          </Link>
          <Link
            href="/state"
            class={route.view === 'scopes' || route.view === 'scope' ? 'here' : ''}
          >
            State
          </Link>
        </nav>
        {studio && (
          <span class="mode" title={`@ckpt/cli ${studio.version}`}>
            {studio.backend} ·{' '}
            {write ? <strong class="writable">changes allowed</strong> : 'read-only'}
          </span>
        )}
      </header>
      <main>
        <ErrorNote error={error} />
        {route.view === 'catalog' ? (
          <Catalog prefix={route.prefix} where={route.where} />
        ) : route.view === 'session' ? (
          <SessionView key={route.id} route={route} write={write} />
        ) : route.view === 'scopes' ? (
          <Scopes />
        ) : route.view === 'scope' ? (
          <Scope key={route.scope} scope={route.scope} write={write} />
        ) : (
          <p class="empty">
            Nothing at {route.path}. <Link href="/">See the sessions</Link>
          </p>
        )}
      </main>
      <ConfirmHost />
    </>
  );
}

render(<App />, document.getElementById('app')!);
