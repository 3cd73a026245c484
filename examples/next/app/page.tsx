import { Help } from './help';

export default function Page() {
  return (
    <main>
      <h1>Help</h1>
      <Help />
    </main>
  );
}
