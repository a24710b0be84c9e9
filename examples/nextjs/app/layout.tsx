import type { ReactNode } from "react";

export const metadata = { title: "Sign up" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        <script type="module" src="/warden/warden.js" />
      </head>
      <body>{children}</body>
    </html>
  );
}
