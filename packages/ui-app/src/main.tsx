/**
 * The inspector's shell: the navigation bar and the routes (hash routing through wouter-preact's
 * `useHashLocation`, so the server serves one page and a reload keeps the place).
 */
import { render } from "preact"
import { Link, Route, Router, Switch } from "wouter-preact"
import { useHashLocation } from "wouter-preact/use-hash-location"
import { ChangesPage } from "./ChangesPage.js"
import { SessionsPage } from "./SessionsPage.js"
import { StatusPage } from "./StatusPage.js"
import { TimelinePage } from "./TimelinePage.js"
import "./styles.css"

const App = () => (
  <Router hook={useHashLocation}>
    <header class="bar">
      <Link href="/" class="brand">
        Rewind
      </Link>
      <nav>
        <Link href="/">Sessions</Link>
        <Link href="/status">Status</Link>
      </nav>
    </header>
    <main>
      <Switch>
        <Route path="/">
          <SessionsPage />
        </Route>
        <Route path="/status">
          <StatusPage />
        </Route>
        <Route path="/s/:session/turn/:turn">
          {(p) => <ChangesPage sessionId={p.session} turnId={p.turn} />}
        </Route>
        <Route path="/s/:session/point/:point">
          {(p) => <ChangesPage sessionId={p.session} pointId={p.point} />}
        </Route>
        <Route path="/s/:session">{(p) => <TimelinePage sessionId={p.session} />}</Route>
        <Route>
          <p>
            Nothing here. <Link href="/">Sessions</Link>
          </p>
        </Route>
      </Switch>
    </main>
  </Router>
)

render(<App />, document.getElementById("app")!)
