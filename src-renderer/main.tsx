// The Reflect metadata API that @peculiar/x509's decorators need (its README, "Installation"),
// loaded before anything else: the x509 code arrives later in chunks of its own (CSR and
// certificate screens), whose evaluation order a bundler does not tie to a side-effect import.
import 'reflect-metadata'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './app'
import { ExportTray } from './export-tray'
import './styles.css'

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>
)
// Exports run in the main process whatever screen is open; their tray lives outside the screens.
const tray = document.createElement('div')
document.body.append(tray)
createRoot(tray).render(<ExportTray />)
