import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'

function App(): React.JSX.Element {
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', padding: 32 }}>
      <h1>CertDesk</h1>
      <p>The desktop screens are not built yet. The reseller API runs on 127.0.0.1; see the README.</p>
    </main>
  )
}

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>
)
