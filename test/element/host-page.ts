// Loaded by the plain host page the tab tests open in frames: the element, defined as a site would.
import '../../src/element/define.js';
