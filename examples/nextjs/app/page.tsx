export default function SignupPage() {
  return (
    <main>
      <h1>Create your account</h1>
      <form method="post" action="/signup" data-warden>
        <label>
          Email <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          Name <input name="name" autoComplete="name" />
        </label>
        <button type="submit">Sign up</button>
      </form>
    </main>
  );
}
