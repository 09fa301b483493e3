export { version } from "../remote/release.js";
